import { Fragment } from "preact";
import type { WebhookEvent } from "../api.js";

/** The attempt's exchange: the signed headers as sent, then the receiver's status and answer (marked when cut). */
export function Exchange({ ev }: { ev: WebhookEvent }) {
  const headers = Object.entries(ev.request_headers ?? {});
  return (
    <>
      <h4>Request headers</h4>
      {headers.length === 0 ? (
        <p class="hint">Not sent, or sent before Roster kept request headers.</p>
      ) : (
        <dl class="facts headers" aria-label="Request headers">
          {headers.map(([name, value]) => (
            <Fragment key={name}>
              <dt class="mono">{name}</dt>
              <dd class="mono wrap">{value}</dd>
            </Fragment>
          ))}
        </dl>
      )}
      <h4>Response</h4>
      <p>
        Status {ev.status_code ?? "none (no answer)"}
        {ev.response_body_truncated ? " · body cut at 4 KiB" : null}
      </p>
      {ev.response_body === null ? (
        <p class="hint">No response body was read.</p>
      ) : ev.response_body === "" ? (
        <p class="hint">Empty response body.</p>
      ) : (
        <figure class="json-figure">
          <figcaption class="sr-only">Response body</figcaption>
          <pre class="json">
            {ev.response_body}
            {ev.response_body_truncated ? "\n… (cut at 4 KiB)" : null}
          </pre>
        </figure>
      )}
    </>
  );
}
