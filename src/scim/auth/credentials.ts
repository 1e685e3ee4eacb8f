import { ScimError } from "../errors.js";

/**
 * What an `Authorization` header presents. A bearer value is the header with one case-insensitive `Bearer` prefix
 * removed (Entra adds one, some clients send the secret bare). A Basic value is decoded when it is well-formed
 * (RFC 7617: base64 of `user:password`); the header as a whole is kept too, since a static secret may itself
 * start with "Basic ".
 */
export type Presented =
  | { readonly kind: "bearer"; readonly value: string }
  | { readonly kind: "basic"; readonly user: string; readonly password: string; readonly bare: string };

export function presentedCredentials(header: string | undefined): Presented {
  if (header === undefined || header.trim() === "") {
    throw new ScimError(401, undefined, "no authorization header found");
  }
  const trimmed = header.trim();
  const basic = /^basic\s+([A-Za-z0-9+/=_-]+)$/i.exec(trimmed);
  if (basic?.[1] !== undefined) {
    const decoded = Buffer.from(basic[1], "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon > 0) {
      return { kind: "basic", user: decoded.slice(0, colon), password: decoded.slice(colon + 1), bare: trimmed };
    }
  }
  const value = trimmed.replace(/^bearer(\s+|$)/i, "");
  if (value === "") throw new ScimError(401, undefined, "invalid authorization header");
  return { kind: "bearer", value };
}

/** A JWS compact serialisation: three base64url parts, the first a JSON header (`eyJ` is `{"`). */
export const looksLikeAccessToken = (value: string): boolean =>
  value.startsWith("eyJ") && /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(value);
