import { badRequest } from "../errors.js";
import { coreSchemaOf, findAttribute, type ResourceName } from "../schema/registry.js";
import type { AttributeDefinition } from "../schema/types.js";
import { deepEqual, isObject, isUnassigned } from "./json.js";
import type { FilterTerm, JsonObject, JsonValue, PatchOpName, PatchPath, ScimObject } from "./types.js";
import { normalizeComplex, normalizeElements, normalizeSingle, withoutNulls } from "./values.js";

/** The object an attribute lives in: the resource itself, or its extension object (created on demand). */
const containerOf = (
  target: ScimObject,
  resource: ResourceName,
  schema: string,
  create: boolean,
): JsonObject | undefined => {
  if (schema === coreSchemaOf(resource)) return target;
  const existing = target[schema];
  if (isObject(existing)) return existing;
  if (!create) return undefined;
  const fresh: JsonObject = {};
  target[schema] = fresh;
  return fresh;
};

/** Sets sub-attributes of `value` on `into`; a null unassigns (RFC 7644 §3.5.2.3: unspecified ones stay). */
const merge = (into: JsonObject, value: JsonObject): void => {
  for (const [key, v] of Object.entries(value)) {
    if (v === null) delete into[key];
    else into[key] = v;
  }
};

const labelOf = (path: PatchPath): string =>
  path.sub === undefined ? path.attribute : `${path.attribute}.${path.sub}`;

const applySingle = (container: JsonObject, op: PatchOpName, path: PatchPath, value: unknown): void => {
  const key = path.attribute;
  if (op === "remove") {
    delete container[key];
    return;
  }
  const normalized = normalizeSingle(path.definition, value, labelOf(path));
  const existing = container[key];
  if (normalized === undefined) delete container[key];
  else if (isObject(normalized) && isObject(existing)) merge(existing, normalized);
  else container[key] = isObject(normalized) ? withoutNulls(normalized) : normalized;
  if (isUnassigned(container[key])) delete container[key];
};

/** `name.givenName`, `manager.value`: a sub-attribute of a single-valued complex attribute. */
const applySingleSub = (
  container: JsonObject,
  op: PatchOpName,
  path: PatchPath,
  sub: AttributeDefinition,
  value: unknown,
) => {
  const key = path.attribute;
  const existing = container[key];
  const normalized = op === "remove" ? undefined : normalizeSingle(sub, value, labelOf(path));
  if (normalized === undefined) {
    if (isObject(existing)) delete existing[sub.name];
  } else if (isObject(existing)) existing[sub.name] = normalized;
  else container[key] = { [sub.name]: normalized };
  if (isUnassigned(container[key])) delete container[key];
};

/** Whether a multi-valued element matches a value filter (`type eq "work"`); also used by projection. */
export const matchesFilter = (
  element: JsonValue,
  terms: readonly FilterTerm[],
  definition: AttributeDefinition,
): boolean =>
  isObject(element) &&
  terms.every((term) => {
    const actual = element[term.attribute];
    if (term.value === null) return actual === undefined || actual === null;
    const caseExact = findAttribute(definition.subAttributes ?? [], term.attribute)?.caseExact ?? false;
    if (typeof actual === "string" && typeof term.value === "string" && !caseExact) {
      return actual.toLowerCase() === term.value.toLowerCase();
    }
    return actual === term.value;
  });

/** RFC 7644 §3.5.2.1 (and Entra's habit, docs/decisions.md): `add` on an unmatched filter creates what it describes. */
const elementFromFilter = (terms: readonly FilterTerm[]): JsonObject =>
  Object.fromEntries(terms.flatMap((t) => (t.value === null ? [] : [[t.attribute, t.value]])));

const noTarget = (path: PatchPath): Error =>
  badRequest("noTarget", `no value of ${path.attribute} matches the filter of the replace operation`);

/** Applies one operation to a multi-valued attribute; returns the elements that were set primary. */
const applyMultiValued = (container: JsonObject, op: PatchOpName, path: PatchPath, value: unknown): JsonObject[] => {
  const key = path.attribute;
  const definition = path.definition;
  const label = labelOf(path);
  const current = container[key];
  let elements: JsonValue[] = Array.isArray(current) ? current : current === undefined ? [] : [current];
  const touched: JsonValue[] = [];

  if (path.filter === undefined && path.sub === undefined) {
    if (op === "remove") elements = [];
    else if (op === "replace") {
      elements = normalizeElements(definition, value, label);
      touched.push(...elements);
    } else {
      for (const element of normalizeElements(definition, value, label)) {
        const same = elements.find((e) => deepEqual(e, element));
        if (same === undefined) elements.push(element);
        touched.push(same ?? element);
      }
    }
  } else if (path.sub !== undefined && path.subDefinition !== undefined) {
    const sub = path.subDefinition.name;
    const selected =
      path.filter === undefined ? elements : elements.filter((e) => matchesFilter(e, path.filter ?? [], definition));
    const normalized = op === "remove" ? undefined : normalizeSingle(path.subDefinition, value, label);
    if (selected.length === 0 && op === "replace" && path.filter !== undefined) throw noTarget(path);
    if (selected.length === 0 && normalized !== undefined) {
      const created = { ...elementFromFilter(path.filter ?? []), [sub]: normalized };
      elements.push(created);
      touched.push(created);
    }
    for (const element of selected) {
      if (!isObject(element)) continue;
      if (normalized === undefined) delete element[sub];
      else element[sub] = normalized;
      touched.push(element);
    }
  } else {
    const filter = path.filter ?? [];
    const selected = elements.filter((e) => matchesFilter(e, filter, definition));
    if (op === "remove") elements = elements.filter((e) => !selected.includes(e));
    else {
      const normalized = normalizeComplex(definition, value, label);
      if (selected.length === 0 && op === "replace") throw noTarget(path);
      if (selected.length === 0) {
        const created = { ...elementFromFilter(filter), ...withoutNulls(normalized) };
        elements.push(created);
        touched.push(created);
      }
      elements = elements.map((element) => {
        if (!selected.includes(element) || !isObject(element)) return element;
        // RFC 7644 §3.5.2.3: replace swaps the matched values; add merges into them.
        const updated = op === "replace" ? withoutNulls(normalized) : element;
        if (op === "add") merge(updated, normalized);
        touched.push(updated);
        return updated;
      });
    }
  }

  elements = elements.filter((e) => !isUnassigned(e));
  if (elements.length === 0) delete container[key];
  else container[key] = elements;
  return touched.filter((e): e is JsonObject => isObject(e) && e.primary === true && elements.includes(e));
};

/** RFC 7644 §3.5.2: setting primary on one value sets it false on the others; two new primaries is an error. */
const settlePrimary = (container: JsonObject, path: PatchPath, promoted: readonly JsonObject[]): void => {
  const unique = [...new Set(promoted)];
  if (unique.length > 1) {
    throw badRequest("invalidSyntax", `more than one ${path.attribute} value has primary set to true`);
  }
  const chosen = unique[0];
  const elements = container[path.attribute];
  if (chosen === undefined || !Array.isArray(elements)) return;
  for (const element of elements) {
    if (element !== chosen && isObject(element) && element.primary === true) element.primary = false;
  }
};

/** Applies one resolved, non-member operation to `target` in place. Read-only targets are ignored. */
export const applyAtPath = (
  target: ScimObject,
  resource: ResourceName,
  op: PatchOpName,
  path: PatchPath,
  value: unknown,
): void => {
  if (path.definition.mutability === "readOnly" || path.subDefinition?.mutability === "readOnly") return;
  const container = containerOf(target, resource, path.schema, op !== "remove");
  if (container === undefined) return;
  if (path.definition.multiValued) {
    settlePrimary(container, path, applyMultiValued(container, op, path, value));
  } else if (path.subDefinition !== undefined) {
    applySingleSub(container, op, path, path.subDefinition, value);
  } else {
    applySingle(container, op, path, value);
  }
};
