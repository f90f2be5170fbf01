/** The wizard's steps, in order; a draft's `step` field holds the id of the one to resume at. */
export const STEPS = [
    { id: 'name', title: 'Name' },
    { id: 'image', title: 'Image' },
    { id: 'sign-in', title: 'Sign-in method' },
    { id: 'access', title: 'Access and admin account' },
    { id: 'compose', title: 'Compose file' },
    { id: 'nginx', title: 'nginx site' },
    { id: 'secrets', title: 'Secrets' },
    { id: 'preview', title: 'Preview' },
    { id: 'deploy', title: 'Deploy' },
] as const;

export type StepId = (typeof STEPS)[number]['id'];

export function stepTitle(id: StepId): string {
    return STEPS.find((step) => step.id === id)?.title ?? id;
}

export function stepAfter(id: StepId): StepId {
    const index = STEPS.findIndex((step) => step.id === id);
    return STEPS[Math.min(index + 1, STEPS.length - 1)]?.id ?? id;
}

export function stepBefore(id: StepId): StepId {
    const index = STEPS.findIndex((step) => step.id === id);
    return STEPS[Math.max(index - 1, 0)]?.id ?? id;
}
