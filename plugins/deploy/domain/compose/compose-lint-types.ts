/** What the lint rules are given: the service or the file, its values as the deploy substitutes them, and a reporter. */
import type { FindingLevel } from '../findings/finding.ts';
import type { LintContext } from './compose-host-paths.ts';
import type { PathSegment } from './compose-path.ts';
import type { ComposeService, ComposeSpec } from './compose-types.ts';

export type Reporter = (level: FindingLevel, field: PathSegment[], message: string, fix: string) => void;

interface Lint {
    context: LintContext;
    /** A value of the file with its `${VAR}`s substituted, as the deploy substitutes them. */
    text: (value: string) => string;
}

export interface ServiceLint extends Lint {
    name: string;
    service: ComposeService;
    /** Reports a finding at a field of the service. */
    report: Reporter;
}

export interface ProjectLint extends Lint {
    spec: ComposeSpec;
    /** Reports a finding at a path from the top of the file. */
    report: Reporter;
}

export type ServiceRule = (lint: ServiceLint) => void;
