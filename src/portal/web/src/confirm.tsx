import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef } from "preact/hooks";
import { call } from "./api.js";
import { ErrorNote, useAction } from "./ui.js";

/** A modal confirmation (native dialog: focus trapped, Escape cancels) that says what the action removes. */
export function Confirm(props: {
  title: string;
  confirmLabel: string;
  children: ComponentChildren;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const action = useAction();
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  const titleId = useId();
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={props.onClose}>
      <h2 id={titleId}>{props.title}</h2>
      <div class="dialog-body">{props.children}</div>
      <ErrorNote error={action.error} />
      <div class="actions">
        <button type="button" class="secondary" onClick={() => ref.current?.close()}>
          Cancel
        </button>
        <button
          type="button"
          class="danger"
          disabled={action.busy}
          onClick={() =>
            action.run(async () => {
              await props.onConfirm();
              ref.current?.close();
            })
          }
        >
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** A Confirm whose action is `DELETE path` on the admin API; `onDeleted` runs once it has answered. */
export function ConfirmDelete(props: {
  title: string;
  confirmLabel: string;
  path: string;
  children: ComponentChildren;
  onDeleted: () => void;
  onClose: () => void;
}) {
  const { path, onDeleted, ...rest } = props;
  return (
    <Confirm
      {...rest}
      onConfirm={async () => {
        await call("DELETE", path);
        onDeleted();
      }}
    />
  );
}
