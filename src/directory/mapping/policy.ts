/**
 * Where mapping scripts may come from (docs/decisions.md "Mapping sandbox"): `file://` only below `dir`, `http(s)://`
 * only to allowed hosts. Both unset refuse those schemes; inline and `base64://` mappings need neither.
 */
export interface MappingSourcePolicy {
  /** ROSTER_MAPPING_DIR: the directory `file://` scripts must resolve into (symlinks and `..` resolved first). */
  readonly dir: string | undefined;
  /** ROSTER_MAPPING_URL_ALLOW: host names (`config.example.com`, `*.example.com`), IP addresses or CIDR ranges. */
  readonly urlAllow: readonly string[];
}

export const NO_MAPPING_SOURCES: MappingSourcePolicy = { dir: undefined, urlAllow: [] };

export { allowEntryProblem, UrlAllowList } from "../../platform/outbound/allow-list.js";
