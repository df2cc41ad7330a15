// The Analyses page's sections, in page order. A new analysis is a section module (see analyses_section.ts)
// added here; nothing else changes.
import { annotationsSection } from "./analyses_annotations";
import { idleSection } from "./analyses_idle";
import { launchesSection } from "./analyses_launches";
import { queuesSection } from "./analyses_queues";
import type { AnalysisSection } from "./analyses_section";
import { sequencesSection } from "./analyses_sequences";

export const ANALYSIS_SECTIONS: readonly AnalysisSection[] = [
  idleSection,
  launchesSection,
  queuesSection,
  sequencesSection,
  annotationsSection,
];
