import { useEffect, useState } from "preact/hooks";
import entraUser from "../../../../../test/fixtures/idp/entra-create-user.json";
import oktaUser from "../../../../../test/fixtures/idp/okta-create-user.json";
import { type Connection, call, enc } from "../api.js";
import { DEFAULT_MAPPING } from "../../../../directory/mapping/default.js";
import { ActionForm, Field, SelectField, useSave } from "../fields.js";
import { ErrorNote, Json, useAction } from "../ui.js";

const SAMPLES = {
  okta: { label: "Okta: create user", user: oktaUser },
  entra: { label: "Microsoft Entra ID: create user", user: entraUser },
} as const;
type SampleKey = keyof typeof SAMPLES;

interface SyntaxProblem {
  readonly message: string;
  readonly line: number;
  readonly column: number;
}

const isUrl = (s: string) => /^(https?|file|base64):\/\//i.test(s.trim());

/** JSONata parse errors with their place, checked in the browser (the parser loads only with this page). */
async function checkSyntax(source: string): Promise<SyntaxProblem | undefined> {
  if (source.trim() === "" || isUrl(source)) return undefined;
  const { default: jsonata } = await import("jsonata");
  try {
    jsonata(source);
    return undefined;
  } catch (e) {
    const err = e as { message?: string; position?: number };
    const at = Math.min(Math.max((err.position ?? 1) - 1, 0), source.length);
    const before = source.slice(0, at).split("\n");
    return {
      message: err.message ?? "syntax error",
      line: before.length,
      column: (before[before.length - 1]?.length ?? 0) + 1,
    };
  }
}

export function MappingTab({ conn, onSaved }: { conn: Connection; onSaved: () => void }) {
  const [source, setSource] = useState(conn.mapping ?? DEFAULT_MAPPING);
  const [problem, setProblem] = useState<SyntaxProblem | undefined>();
  const [sample, setSample] = useState<SampleKey>("okta");
  const [result, setResult] = useState<unknown>();
  const dry = useAction();
  const save = useSave();

  useEffect(() => {
    let live = true;
    const timer = setTimeout(() => {
      checkSyntax(source).then((p) => live && setProblem(p));
    }, 200);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [source]);

  return (
    <>
      <h2>Data mapping</h2>
      <p class="lead">
        A JSONata expression that turns each SCIM user of this connection into the identity's traits.
        {conn.mapping === null ? " This connection uses the default mapping shown below." : ""}
      </p>
      <ActionForm
        onSubmit={() =>
          save.run(async () => {
            await call("PATCH", `/scimClients/${enc(conn.client_id)}?update_mask=mapping`, { mapping: source });
            onSaved();
          })
        }
      >
        <Field
          label="JSONata expression"
          hint="Or a URL (https://, file://, base64://) Roster loads the expression from."
          error={
            problem === undefined ? undefined : `Line ${problem.line}, column ${problem.column}: ${problem.message}`
          }
        >
          {(id, d) => (
            <textarea
              id={id}
              class="mono editor"
              rows={12}
              spellcheck={false}
              aria-describedby={d}
              aria-invalid={problem !== undefined}
              value={source}
              onInput={(e) => {
                setSource(e.currentTarget.value);
                save.clearSaved();
              }}
            />
          )}
        </Field>
        <div class="form-end">
          <button type="submit" disabled={save.busy || problem !== undefined}>
            Save mapping
          </button>
          <button type="button" class="secondary" onClick={() => setSource(DEFAULT_MAPPING)}>
            Start from the default
          </button>
          {save.saved ? <span role="status">Saved: new and updated users get these traits.</span> : null}
        </div>
        <ErrorNote error={save.error} />
      </ActionForm>
      <div class="card">
        <h3>Dry run</h3>
        <p class="hint">
          Runs the expression above (saved or not) on a sample user, as Roster would; nothing is stored.
        </p>
        <div class="toolbar">
          <SelectField
            label="Sample payload"
            value={sample}
            options={Object.entries(SAMPLES).map(([k, s]) => [k as SampleKey, s.label] as const)}
            onChange={setSample}
          />
          <div class="form-end">
            <button
              type="button"
              disabled={dry.busy || problem !== undefined}
              onClick={() =>
                dry.run(async () => {
                  setResult(undefined);
                  const out = await call<{ traits: unknown }>(
                    "POST",
                    `/scimClients/${enc(conn.client_id)}:testMapping`,
                    {
                      user: SAMPLES[sample].user,
                      mapping: source,
                    },
                  );
                  setResult(out.traits);
                })
              }
            >
              Run dry run
            </button>
          </div>
        </div>
        <ErrorNote error={dry.error} />
        <div class="two">
          <div>
            <h4>Input: {SAMPLES[sample].label}</h4>
            <Json value={SAMPLES[sample].user} label="Sample SCIM user" />
          </div>
          <div>
            <h4>Traits</h4>
            {result === undefined ? (
              <p class="muted">Run the dry run to see the traits.</p>
            ) : (
              <Json value={result} label="Resulting traits" />
            )}
          </div>
        </div>
      </div>
    </>
  );
}
