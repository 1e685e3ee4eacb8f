import { badRequest, ScimError } from "../errors.js";
import { PATCH_OP_SCHEMA } from "../render.js";
import {
  CORE_REGISTRY,
  canonicalSchemaUrn,
  coreSchemaOf,
  type ResourceName,
  type SchemaRegistry,
  splitSchemaPrefix,
} from "../schema/registry.js";
import { canonicalize, finalize } from "./canonical.js";
import { clone, deepEqual, isObject } from "./json.js";
import { memberOperation } from "./members.js";
import { applyAtPath } from "./mutate.js";
import { parsePatchPath } from "./path.js";
import type { MemberOp, PatchOpName, PatchResult, ScimObject } from "./types.js";

interface Operation {
  readonly op: PatchOpName;
  readonly path: string | undefined;
  readonly value: unknown;
  readonly hasValue: boolean;
}

const invalidSyntax = (detail: string) => badRequest("invalidSyntax", detail);

const field = (object: Record<string, unknown>, name: string): unknown =>
  Object.entries(object).find(([k]) => k.toLowerCase() === name)?.[1];

/** A PatchOp message with a non-empty Operations array; op names in any case (Entra sends "Replace"). */
const parseBody = (body: unknown): Operation[] => {
  if (!isObject(body)) throw invalidSyntax("PATCH body must be a JSON object");
  const schemas = field(body, "schemas");
  if (
    !Array.isArray(schemas) ||
    !schemas.some((s) => typeof s === "string" && s.toLowerCase() === PATCH_OP_SCHEMA.toLowerCase())
  ) {
    throw invalidSyntax(`schemas must contain ${PATCH_OP_SCHEMA}`);
  }
  const operations = field(body, "operations");
  if (!Array.isArray(operations) || operations.length === 0)
    throw invalidSyntax("Operations must be a non-empty array");
  return operations.map((raw, i) => {
    if (!isObject(raw)) throw invalidSyntax(`Operations[${i}] must be an object`);
    const op = field(raw, "op");
    const name = typeof op === "string" ? op.toLowerCase() : undefined;
    if (name !== "add" && name !== "replace" && name !== "remove") {
      throw invalidSyntax(`Operations[${i}].op must be add, replace or remove`);
    }
    const path = field(raw, "path");
    if (path !== undefined && path !== null && typeof path !== "string") {
      throw badRequest("invalidPath", `Operations[${i}].path must be a string`);
    }
    const hasValue = Object.keys(raw).some((k) => k.toLowerCase() === "value");
    const trimmed = typeof path === "string" && path.trim() !== "" ? path.trim() : undefined;
    return { op: name, path: trimmed, value: field(raw, "value"), hasValue };
  });
};

class Patcher {
  readonly memberOps: MemberOp[] = [];

  constructor(
    private readonly resource: ResourceName,
    readonly target: ScimObject,
    private readonly registry: SchemaRegistry,
  ) {}

  apply(operation: Operation): void {
    const { op, path, value, hasValue } = operation;
    if (path === undefined) {
      // RFC 7644 §3.5.2.2: remove needs a target.
      if (op === "remove") throw badRequest("noTarget", "remove requires a path");
      this.applyPathless(op, value);
      return;
    }
    const extension = this.extensionUrn(path);
    if (extension !== undefined) {
      if (op === "remove") delete this.target[extension];
      else this.applyPathless(op, { [extension]: value });
      return;
    }
    if (this.applyVerbatim(op, path, value)) return;
    this.applyPath(op, path, value, hasValue);
  }

  /** RFC 7644 §3.5.2.1/3: a pathless value is a set of attribute paths; Entra's dotted and URN keys are paths too. */
  private applyPathless(op: PatchOpName, value: unknown): void {
    if (!isObject(value)) throw badRequest("invalidValue", `${op} without a path needs an object value`);
    for (const [key, item] of Object.entries(value)) {
      if (key.toLowerCase() === "schemas") continue;
      const extension = this.extensionUrn(key);
      if (extension === undefined) {
        if (this.applyVerbatim(op, key, item)) continue;
        this.applyPath(op, key, item, true);
      } else if (isObject(item)) {
        for (const [name, sub] of Object.entries(item)) this.applyExtensionAttribute(op, extension, name, sub);
      } else if (item === null && op === "replace") {
        delete this.target[extension];
      } else {
        throw badRequest("invalidValue", `${extension} must be an object`);
      }
    }
  }

  /**
   * One key of an extension's object value. RFC 7643 §3: `schemas` describes a resource, not an extension, so a copy
   * of it inside the value (Entra sends one) is ignored; an error names the key the client sent, not a path made here.
   */
  private applyExtensionAttribute(op: PatchOpName, extension: string, name: string, value: unknown): void {
    if (name.toLowerCase() === "schemas") return;
    try {
      this.applyPath(op, `${extension}:${name}`, value, true);
    } catch (e) {
      if (!(e instanceof ScimError) || e.scimType !== "invalidPath") throw e;
      throw badRequest("invalidPath", `${JSON.stringify(name)} in the value of ${extension} is not an attribute of it`);
    }
  }

  private applyPath(op: PatchOpName, rawPath: string, value: unknown, hasValue: boolean): void {
    const path = parsePatchPath(this.resource, rawPath, this.registry);
    if (this.resource === "Group" && path.attribute === "members") {
      const memberOp = memberOperation(op, path, value, hasValue);
      if (memberOp !== undefined) this.memberOps.push(memberOp);
      return;
    }
    if (op !== "remove" && !hasValue) throw badRequest("invalidValue", `${op} of ${rawPath} needs a value`);
    applyAtPath(this.target, this.resource, op, path, value);
  }

  private extensionUrn(name: string): string | undefined {
    const urn = canonicalSchemaUrn(this.resource, name, this.registry);
    return urn === coreSchemaOf(this.resource) ? undefined : urn;
  }

  /**
   * With unknown extensions stored (docs/scim-extensions.md), a path or key under an undeclared schema URN edits
   * the kept object as it is, without validation: `urn` names the object, `urn:attr` one member of it.
   */
  private applyVerbatim(op: PatchOpName, key: string, value: unknown): boolean {
    if (!this.registry.storeUnknown || !key.toLowerCase().startsWith("urn:")) return false;
    const { urn, name } = splitSchemaPrefix(key);
    if (urn === undefined || canonicalSchemaUrn(this.resource, urn, this.registry) !== undefined) return false;
    const holder = Object.keys(this.target).find((k) => k.toLowerCase() === key.toLowerCase());
    const parentHeld = Object.keys(this.target).some((k) => k.toLowerCase() === urn.toLowerCase());
    // `urn:…:attr` under an object already kept is a member of it; otherwise an object value starts a new one.
    if (!parentHeld && (holder !== undefined || isObject(value) || (value === undefined && op === "remove"))) {
      const whole = holder ?? key;
      if (op === "remove" || value === null) delete this.target[whole];
      else if (!isObject(value)) throw badRequest("invalidValue", `${key} must be an object`);
      else if (op === "add" && isObject(this.target[whole])) Object.assign(this.target[whole] as object, value);
      else this.target[whole] = clone(value);
      return true;
    }
    const parent = Object.keys(this.target).find((k) => k.toLowerCase() === urn.toLowerCase()) ?? urn;
    const object = isObject(this.target[parent]) ? (this.target[parent] as Record<string, unknown>) : {};
    if (op === "remove" || value === null) delete object[name];
    else object[name] = clone(value as ScimObject[string]);
    this.target[parent] = object as ScimObject;
    return true;
  }
}

/**
 * RFC 7644 §3.5.2: applies a PatchOp body to a stored resource (see ScimObject), atomically — the first
 * failing operation throws a ScimError and nothing is returned. Group `members` operations come back as MemberOps.
 */
export const applyPatch = (
  resource: ResourceName,
  current: ScimObject,
  body: unknown,
  registry: SchemaRegistry = CORE_REGISTRY,
): PatchResult => {
  const operations = parseBody(body);
  const before = canonicalize(resource, current, registry);
  const patcher = new Patcher(resource, clone(before), registry);
  for (const operation of operations) patcher.apply(operation);
  finalize(resource, before, patcher.target, registry);
  const members = patcher.memberOps;
  const changed = members.length > 0 || !deepEqual(before, patcher.target);
  return members.length > 0 ? { resource: patcher.target, changed, members } : { resource: patcher.target, changed };
};
