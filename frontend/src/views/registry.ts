// Every view, in tab order. A real view replaces its placeholder module; nothing else changes.
import type { ViewId } from "../state/url_state";
import { analysesView } from "./analyses";
import { compareView } from "./compare";
import { dataPipelineView } from "./data_pipeline";
import { distributedView } from "./distributed";
import { kernelView } from "./kernel";
import { memoryView } from "./memory";
import { modulesView } from "./modules";
import { operatorView } from "./operator";
import { overviewView } from "./overview";
import { stacksView } from "./stacks";
import { stepTraceView } from "./step_trace";
import { traceView } from "./trace";
import type { ViewDefinition } from "./types";

export const VIEWS: readonly ViewDefinition[] = [
  overviewView,
  stepTraceView,
  dataPipelineView,
  operatorView,
  kernelView,
  stacksView,
  modulesView,
  memoryView,
  traceView,
  analysesView,
  distributedView,
  compareView,
];

export function viewById(id: ViewId): ViewDefinition {
  const view = VIEWS.find((candidate) => candidate.id === id);
  if (view === undefined) throw new Error(`no view '${id}'`);
  return view;
}
