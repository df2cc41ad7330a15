// A labelled <select>. Options are rebuilt only when they change, so the run-list polling
// does not close a dropdown the user has open.
import { el } from "./dom";

export interface PickerOption {
  readonly value: string;
  readonly label: string;
  /** Tooltip. */
  readonly title?: string;
}

export interface Picker {
  readonly root: HTMLElement;
  readonly select: HTMLSelectElement;
  /** Shows `options` with `selected` chosen; with no options the picker shows `emptyLabel`, disabled. */
  update(options: readonly PickerOption[], selected: string | null, emptyLabel: string): void;
}

export function createPicker(label: string, testId: string, onChange: (value: string) => void): Picker {
  const select = el("select", { testId, attrs: { "aria-label": label } });
  const root = el("label", { className: "ps-picker" }, label, select);
  let signature = "";
  select.addEventListener("change", () => onChange(select.value));

  function update(options: readonly PickerOption[], selected: string | null, emptyLabel: string): void {
    const next = JSON.stringify([options, emptyLabel]);
    if (next !== signature) {
      signature = next;
      const nodes =
        options.length === 0
          ? [new Option(emptyLabel, "")]
          : options.map((option) => {
              const node = new Option(option.label, option.value);
              if (option.title !== undefined) node.title = option.title;
              return node;
            });
      select.replaceChildren(...nodes);
    }
    select.disabled = options.length === 0;
    const value = selected ?? "";
    if (select.value !== value) select.value = value;
  }

  return { root, select, update };
}
