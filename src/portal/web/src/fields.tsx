import type { ComponentChildren } from "preact";
import { useId } from "preact/hooks";
import { ErrorNote } from "./ui.js";

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

/** A labelled one-line text input; `error` marks it invalid and shows why under it. */
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
}) {
  const { hint, error } = props;
  return (
    <Field label={props.label} {...(hint === undefined ? {} : { hint })} error={error}>
      {(id, d) => (
        <input
          id={id}
          type={props.type ?? "text"}
          class={props.mono === true ? "mono" : undefined}
          required={props.required}
          maxLength={props.maxLength}
          placeholder={props.placeholder}
          aria-describedby={d}
          aria-invalid={error === undefined ? undefined : true}
          value={props.value}
          onInput={(e) => props.onInput(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** A small row button whose accessible name says which item it acts on. */
export function RowButton(props: {
  label: string;
  danger?: boolean;
  onClick: () => void;
  children: ComponentChildren;
}) {
  return (
    <button
      type="button"
      class={props.danger === true ? "danger small" : "secondary small"}
      onClick={props.onClick}
      aria-label={props.label}
    >
      {props.children}
    </button>
  );
}

/** A list item's title that opens its detail pane beside the list. */
export function OpenButton(props: { open: boolean; wrap?: boolean; onClick: () => void; children: ComponentChildren }) {
  return (
    <button
      type="button"
      class={props.wrap === true ? "link row-title wrap" : "link row-title"}
      onClick={props.onClick}
      aria-expanded={props.open}
    >
      {props.children}
    </button>
  );
}
