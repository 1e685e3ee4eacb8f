import { uuidv7 } from "../../src/platform/ids.js";

/** One SCIM user as an IdP sends it and as Roster answers it: the body a request-log entry of a bench carries. */
export const sampleUserId = uuidv7();

export const sampleUser = {
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
  userName: "user42@bench.example",
  name: { givenName: "Ada", familyName: "Lovelace" },
  emails: [{ value: "user42@bench.example", type: "work", primary: true }],
  active: true,
  externalId: "ext-42",
};

/** The user as a GET answers it (id, meta with location and version), as JSON text. */
export const sampleStoredUser = JSON.stringify({
  ...sampleUser,
  id: sampleUserId,
  meta: {
    resourceType: "User",
    created: "2026-11-23T10:00:00.000Z",
    lastModified: "2026-11-23T10:00:00.000Z",
    location: `http://127.0.0.1:8080/scim/bench-client/v2/Users/${sampleUserId}`,
    version: 'W/"1"',
  },
});
