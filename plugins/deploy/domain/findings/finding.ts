/**
 * How much a finding weighs: an error stops the deploy, a risk needs acceptRisks, a warning and information
 * are only shown.
 */
export type FindingLevel = 'error' | 'risk' | 'warning' | 'info';

/** What a check found in a compose file or an nginx site, at the path of the field it is about. */
export interface Finding {
    path: string;
    level: FindingLevel;
    message: string;
    /** Compose findings also name their service and field, and how to fix them, where they can. */
    service?: string;
    field?: string;
    fix?: string;
    /** A compose variable without a value (`${NAME}` not in the secrets file): the secrets file is where it is fixed. */
    variable?: string;
}
