import type { FastifyReply } from "fastify";
import type { ScimType } from "./errors.js";

export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";
export const LIST_RESPONSE_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
export const PATCH_OP_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
export const SCIM_CONTENT_TYPE = "application/scim+json; charset=utf-8";

/** The SCIM Error body: status as a string; scimType and detail only where they apply. */
export function errorBody(status: number, scimType?: ScimType, detail?: string) {
  return {
    schemas: [ERROR_SCHEMA],
    status: String(status),
    ...(scimType === undefined ? {} : { scimType }),
    ...(detail === undefined ? {} : { detail }),
  };
}

export function sendError(reply: FastifyReply, status: number, scimType?: ScimType, detail?: string): FastifyReply {
  return reply
    .code(status)
    .type(SCIM_CONTENT_TYPE)
    .send(errorBody(status, scimType, detail));
}
