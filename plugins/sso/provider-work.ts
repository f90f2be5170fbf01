/** What a sign-in method made at the identity provider, with its undo and what the undo says. */
import type { MethodProviderWork } from './method-types.ts';

export function providerWork(objectName: string, created: boolean, undo: () => Promise<void>): MethodProviderWork {
    return {
        objectName,
        created,
        undo: async () => {
            await undo();
            return created
                ? `removed ${objectName} from the identity provider`
                : `put ${objectName} back as it was at the identity provider`;
        },
    };
}
