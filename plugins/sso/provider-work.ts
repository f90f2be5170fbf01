/** What a sign-in method makes at the identity provider, with its undo and what the undo says. */
import type { ProviderChanges } from '../idp/idp-types.ts';
import type { MethodProviderWork, MethodWorkJournal } from './method-types.ts';

/** What putting `objectName` back did, in words, from what the adapter had changed. */
export function undoneText(objectName: string, changes: { providerId: number | null; providerCreated: boolean }): string {
    if (changes.providerCreated) {
        return `removed ${objectName} from the identity provider`;
    }

    return changes.providerId === null
        ? `${objectName} had not been changed at the identity provider`
        : `put ${objectName} back as it was at the identity provider`;
}

/**
 * The work on `objectName`: `apply` fills `changes` as each object is made (the adapter's ensure call), so that
 * `undo` puts back what it made even when it threw half-way; `journal` (holding the same `changes`) is what a
 * server that takes over a killed run undoes from.
 */
export function providerWork<C extends ProviderChanges>(
    objectName: string,
    changes: C,
    apply: (changes: C, recorded?: () => Promise<void>) => Promise<void>,
    undo: (changes: C) => Promise<void>,
    journal?: MethodWorkJournal,
): MethodProviderWork {
    return {
        objectName,
        apply: async (recorded) => await apply(changes, recorded),
        undo: async () => {
            await undo(changes);
            return undoneText(objectName, changes);
        },
        ...(journal ? { journal } : {}),
    };
}
