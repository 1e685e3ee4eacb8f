import type { ComponentChildren, JSX } from "preact";
import { useId, useState } from "preact/hooks";
import { ErrorNote, useAction } from "./ui.js";

/** A labelled form control with its hint and its error under it, both tied to it for assistive technology. */
export function Field(props: {
  label: string;
  hint?: ComponentChildren;
  error?: string | undefined;
  children: (id: string, describedBy: string | undefined) => ComponentChildren;
}) {
  const id = useId();
  const hintId = props.hint === undefined ? undefined : `${id}-hint`;
  const errId = props.error === undefined ? undefined : `${id}-err`;
  const describedBy = [hintId, errId].filter(Boolean).join(" ") || undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children(id, describedBy)}
      {props.hint === undefined ? null : (
        <p class="hint" id={hintId}>
          {props.hint}
        </p>
      )}
      <ErrorNote error={props.error} {...(errId === undefined ? {} : { id: errId })} />
    </div>
  );
}

/** A checkbox with its label beside it; `span` lets it take the whole row of a two-column form. */
export function CheckField(props: {
  checked: boolean;
  onChange: (checked: boolean) => void;
  span?: boolean;
  children: ComponentChildren;
}) {
  return (
    <div class={props.span === true ? "field span" : "field"}>
      <label class="check">
        <input type="checkbox" checked={props.checked} onChange={(e) => props.onChange(e.currentTarget.checked)} />
        {props.children}
      </label>
    </div>
  );
}

type Options<V extends string> = readonly (readonly [V, string])[];

/** A labelled drop-down of fixed choices. */
export function SelectField<V extends string>(props: {
  label: string;
  hint?: ComponentChildren;
  value: V;
  options: Options<V>;
  onChange: (value: V) => void;
}) {
  return (
    <Field label={props.label} {...(props.hint === undefined ? {} : { hint: props.hint })}>
      {(id, d) => (
        <select
          id={id}
          aria-describedby={d}
          value={props.value}
          onChange={(e) => props.onChange(e.currentTarget.value as V)}
        >
          {props.options.map(([v, text]) => (
            <option key={v} value={v}>
              {text}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** A labelled text input (a text area with `rows`); `error` marks it invalid and shows why under it. */
export function TextField(props: {
  label: string;
  hint?: ComponentChildren;
  error?: string | undefined;
  value: string;
  onInput: (value: string) => void;
  required?: boolean;
  maxLength?: number;
  mono?: boolean;
  type?: "text" | "url" | "search";
  placeholder?: string;
  rows?: number;
}) {
  const { hint, error, rows, mono } = props;
  return (
    <Field label={props.label} {...(hint === undefined ? {} : { hint })} error={error}>
      {(id, d) => {
        const common = {
          id,
          class: mono === true ? "mono" : undefined,
          // Codes, URLs and JSON are not prose.
          spellcheck: mono === true ? false : undefined,
          required: props.required,
          maxLength: props.maxLength,
          placeholder: props.placeholder,
          "aria-describedby": d,
          "aria-invalid": error === undefined ? undefined : true,
          value: props.value,
        };
        return rows === undefined ? (
          <input
            {...common}
            type={props.type ?? "text"}
            inputMode={props.type === "url" ? "url" : undefined}
            onInput={(e) => props.onInput(e.currentTarget.value)}
          />
        ) : (
          <textarea {...common} rows={rows} onInput={(e) => props.onInput(e.currentTarget.value)} />
        );
      }}
    </Field>
  );
}

/** A form that never loads a page: its submit runs `onSubmit` in place (a filter form's fields act as they change). */
export function ActionForm(props: Omit<JSX.HTMLAttributes<HTMLFormElement>, "onSubmit"> & { onSubmit?: () => void }) {
  const { onSubmit, children, ...rest } = props;
  return (
    <form
      {...rest}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit?.();
      }}
    >
      {children}
    </form>
  );
}

/** An action that saves a form: `saved` once its last run succeeded, until the next starts or an edit clears it. */
export function useSave() {
  const action = useAction();
  const [saved, setSaved] = useState(false);
  const run = (work: () => Promise<void>) => {
    setSaved(false);
    return action.run(async () => {
      await work();
      setSaved(true);
    });
  };
  return { ...action, run, saved: saved && action.error === undefined, clearSaved: () => setSaved(false) };
}

/** "Saved." next to a form's button, once its last save succeeded. */
export function Saved({ when }: { when: boolean }) {
  return when ? <span role="status">Saved.</span> : null;
}

/** A small row button whose accessible name says which item it acts on. */
export function RowButton(props: {
  label: string;
  danger?: boolean;
  onClick: () => void;
  children: ComponentChildren;
}) {
  const { label, danger, onClick, children } = props;
  const look = danger === true ? "danger small" : "secondary small";
  return <Button class={look} onClick={onClick} aria-label={label} content={children} />;
}

/** A list item's title that opens its detail pane beside the list. */
export function OpenButton(props: { open: boolean; wrap?: boolean; onClick: () => void; children: ComponentChildren }) {
  const look = props.wrap === true ? "link row-title wrap" : "link row-title";
  return <Button class={look} onClick={props.onClick} aria-expanded={props.open} content={props.children} />;
}

/** A button that submits nothing. */
function Button(props: JSX.HTMLAttributes<HTMLButtonElement> & { content: ComponentChildren }) {
  const { content, ...rest } = props;
  return (
    <button type="button" {...rest}>
      {content}
    </button>
  );
}

/** A form's submit button, disabled while it runs, then any other buttons, then "Saved." after a save. */
export function SubmitRow(props: {
  label: string;
  busy: boolean;
  saved?: boolean;
  span?: boolean;
  children?: ComponentChildren;
}) {
  return (
    <div class={props.span === true ? "form-end span" : "form-end"}>
      <button type="submit" disabled={props.busy}>
        {props.label}
      </button>
      {props.children}
      <Saved when={props.saved === true} />
    </div>
  );
}
