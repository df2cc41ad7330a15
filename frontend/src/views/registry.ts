// Every view, in tab order. A real view replaces its placeholder module; nothing else changes.
import type { ViewId } from "../state/url_state";
import { analysesView } from "./analyses/analyses";
import { compareView } from "./compare/compare";
import { dataPipelineView } from "./data_pipeline/data_pipeline";
import { distributedView } from "./distributed/distributed";
import { kernelView } from "./kernel/kernel";
import { memoryView } from "./memory/memory";
import { modulesView } from "./modules/modules";
import { operatorView } from "./operator/operator";
import { overviewView } from "./overview/overview";
import { rooflineView } from "./roofline/roofline";
import { snapshotView } from "./snapshot/snapshot";
import { stacksView } from "./stacks/stacks";
import { stepTraceView } from "./step_trace/step_trace";
import { traceView } from "./trace/trace";
import type { ViewDefinition } from "./types";

export const VIEWS: readonly ViewDefinition[] = [
  overviewView,
  stepTraceView,
  dataPipelineView,
  operatorView,
  kernelView,
  rooflineView,
  stacksView,
  modulesView,
  memoryView,
  snapshotView,
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
