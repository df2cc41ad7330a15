// The Analyses page's sections, in page order. A new analysis is a section module (see section_frame.ts)
// added here; nothing else changes.
import { annotationsSection } from "./annotations";
import { idleSection } from "./idle";
import { launchesSection } from "./launches";
import { queuesSection } from "./queues";
import type { AnalysisSection } from "./section_frame";
import { sequencesSection } from "./sequences";

export const ANALYSIS_SECTIONS: readonly AnalysisSection[] = [
  idleSection,
  launchesSection,
  queuesSection,
  sequencesSection,
  annotationsSection,
];
