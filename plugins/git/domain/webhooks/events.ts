/** Gitea's webhook event names, in the order Gitea lists a hook's events. */
export const HOOK_EVENTS = [
    'create',
    'delete',
    'fork',
    'push',
    'issues',
    'issue_assign',
    'issue_label',
    'issue_milestone',
    'issue_comment',
    'pull_request',
    'pull_request_assign',
    'pull_request_label',
    'pull_request_milestone',
    'pull_request_comment',
    'pull_request_review_approved',
    'pull_request_review_rejected',
    'pull_request_review_comment',
    'pull_request_sync',
    'pull_request_review_request',
    'wiki',
    'repository',
    'release',
    'package',
    'status',
    'workflow_run',
    'workflow_job',
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

const ISSUE_FAMILY = new Set<string>(['issue_assign', 'issue_label', 'issue_milestone', 'issue_comment']);
const PULL_FAMILY = new Set<string>([
    'pull_request_assign',
    'pull_request_label',
    'pull_request_milestone',
    'pull_request_comment',
    'pull_request_sync',
    'pull_request_review_request',
]);
const PULL_REVIEWS = new Set<string>(['pull_request_review_approved', 'pull_request_review_rejected', 'pull_request_review_comment']);

/**
 * What Gitea stores for the `events` of a hook option: `push` when none are given; `issues` turns on every issue
 * event and `pull_request` every pull request event (`issues_only`, `pull_request_only` just the one); unknown
 * names are ignored.
 */
export function expandEvents(requested: string[] | undefined): HookEvent[] {
    const asked = new Set((requested && requested.length > 0 ? requested : ['push']).map((event) => event.trim().toLowerCase()));
    const wants = (event: HookEvent): boolean => {
        if (event === 'issues') {
            return asked.has('issues') || asked.has('issues_only');
        }

        if (event === 'pull_request') {
            return asked.has('pull_request') || asked.has('pull_request_only');
        }

        if (ISSUE_FAMILY.has(event)) {
            return asked.has(event) || asked.has('issues');
        }

        if (PULL_FAMILY.has(event)) {
            return asked.has(event) || asked.has('pull_request');
        }

        if (PULL_REVIEWS.has(event)) {
            return asked.has('pull_request_review') || asked.has('pull_request');
        }

        return asked.has(event);
    };
    return HOOK_EVENTS.filter(wants);
}

/** The `X-Gitea-Event` header of an event type: issue sub-events are `issues`, comments `issue_comment`. */
export function headerEvent(eventType: string): string {
    if (eventType === 'pull_request_comment') {
        return 'issue_comment';
    }

    if (eventType.startsWith('issue_') && eventType !== 'issue_comment') {
        return 'issues';
    }

    return eventType;
}
