import type { Migration } from "kysely";
import * as foundation from "./0001-foundation.js";
import * as apiKeys from "./0005-api-keys.js";
import * as identityVersion from "./0006-identity-version.js";
import * as listReads from "./0007-list-reads.js";
import * as webhooks from "./0004-webhooks.js";
import * as deprovisioning from "./0009-deprovisioning.js";
import * as observability from "./0011-observability.js";
import * as scimExtensions from "./0010-scim-extensions.js";
import * as webhookCrashSafety from "./0008-webhook-crash-safety.js";
import * as directoryEvents from "./0012-directory-events.js";
import * as outboxTraceContext from "./0013-outbox-trace-context.js";
import * as groupExtensions from "./0014-group-extensions.js";
import * as webhookExchange from "./0015-webhook-exchange.js";
import * as requestLogKeys from "./0016-request-log-keys.js";
import * as requestLogSegments from "./0017-request-log-segments.js";
import * as extensionLimits from "./0018-extension-limits.js";
import * as filterIndexes from "./0019-filter-indexes.js";
import * as groupPatchResponse from "./0020-group-patch-response.js";
import * as scimAuthentication from "./0023-scim-authentication.js";
import * as setupLinks from "./0024-setup-links.js";
import * as eventSources from "./0025-event-sources.js";
import * as requestLogPartitions from "./0026-request-log-partitions.js";
import * as writeCost from "./0027-write-cost.js";
import * as deprovisioningGuard from "./0030-deprovisioning-guard.js";
import * as retiredWebhooks from "./0031-retired-webhooks.js";
import * as heldKeyEvents from "./0032-held-key-events.js";
import * as releasedEvents from "./0033-released-events.js";
import * as setupLinkWebhooks from "./0034-setup-link-webhooks.js";
import * as activeUserCounts from "./0035-active-user-counts.js";
import * as heldLookups from "./0036-held-lookups.js";
import * as sharedGuardLock from "./0037-shared-guard-lock.js";
import * as heldPlans from "./0038-held-plans.js";
import * as heldKeyCheck from "./0039-held-key-check.js";
import * as deactivationsCounted from "./0040-deactivations-counted.js";
import * as heldBatches from "./0041-held-batches.js";
import * as untrippedHolds from "./0042-untripped-holds.js";
import * as hotUserUpdates from "./0043-hot-user-updates.js";
import * as writtenDerivedColumns from "./0044-written-derived-columns.js";
import * as statementClientCheck from "./0045-statement-client-check.js";
import * as guardStatements from "./0046-guard-statements.js";
import * as guardWindowCounter from "./0047-guard-window-counter.js";

/** Every migration, registered explicitly in order (no directory scanning). */
export const MIGRATIONS: Record<string, Migration> = {
  "0001-foundation": foundation,
  "0004-webhooks": webhooks,
  "0005-api-keys": apiKeys,
  "0006-identity-version": identityVersion,
  "0007-list-reads": listReads,
  "0009-deprovisioning": deprovisioning,
  "0011-observability": observability,
  "0010-scim-extensions": scimExtensions,
  "0008-webhook-crash-safety": webhookCrashSafety,
  "0012-directory-events": directoryEvents,
  "0013-outbox-trace-context": outboxTraceContext,
  "0014-group-extensions": groupExtensions,
  "0015-webhook-exchange": webhookExchange,
  "0016-request-log-keys": requestLogKeys,
  "0017-request-log-segments": requestLogSegments,
  "0018-extension-limits": extensionLimits,
  "0019-filter-indexes": filterIndexes,
  "0020-group-patch-response": groupPatchResponse,
  "0023-scim-authentication": scimAuthentication,
  "0024-setup-links": setupLinks,
  "0025-event-sources": eventSources,
  "0026-request-log-partitions": requestLogPartitions,
  "0027-write-cost": writeCost,
  "0030-deprovisioning-guard": deprovisioningGuard,
  "0031-retired-webhooks": retiredWebhooks,
  "0032-held-key-events": heldKeyEvents,
  "0033-released-events": releasedEvents,
  "0034-setup-link-webhooks": setupLinkWebhooks,
  "0035-active-user-counts": activeUserCounts,
  "0036-held-lookups": heldLookups,
  "0037-shared-guard-lock": sharedGuardLock,
  "0038-held-plans": heldPlans,
  "0039-held-key-check": heldKeyCheck,
  "0040-deactivations-counted": deactivationsCounted,
  "0041-held-batches": heldBatches,
  "0042-untripped-holds": untrippedHolds,
  "0043-hot-user-updates": hotUserUpdates,
  "0044-written-derived-columns": writtenDerivedColumns,
  "0045-statement-client-check": statementClientCheck,
  "0046-guard-statements": guardStatements,
  "0047-guard-window-counter": guardWindowCounter,
};
