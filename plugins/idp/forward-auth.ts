/**
 * The forward-auth contracts of the identity-provider kinds this process has loaded, for the nginx site model, which
 * renders and reads sites synchronously. authentik's is always known: it is the default kind, and sites written
 * before the kind was part of the connection are its. Loading a kind (idp-kinds.ts) adds its contract.
 */
import { ValidationError } from '../../lib/errors.ts';
import type { ForwardAuthContract } from './idp-types.ts';
import { authentikForwardAuth } from './providers/authentik/forward-auth.ts';

/** The kind a connection has when none is named. */
export const DEFAULT_IDP_KIND = 'authentik';

const contracts = new Map<string, ForwardAuthContract>([[DEFAULT_IDP_KIND, authentikForwardAuth]]);

export function addForwardAuth(kind: string, contract: ForwardAuthContract): void {
    contracts.set(kind, contract);
}

/** The contract of `kind` (the default kind's when none is named); undefined for a kind not loaded. */
export function forwardAuthOf(kind: string = DEFAULT_IDP_KIND): ForwardAuthContract | undefined {
    return contracts.get(kind);
}

/** The forward-auth contract of a site's kind (the default kind's when none is named); a kind not loaded is a ValidationError. */
export function forwardAuthContract(forwardAuth: { kind?: string }): ForwardAuthContract {
    const contract = forwardAuthOf(forwardAuth.kind ?? DEFAULT_IDP_KIND);
    if (!contract) {
        throw new ValidationError(`forwardAuth.kind: there is no identity-provider kind ${forwardAuth.kind}`);
    }

    return contract;
}

/** Every loaded kind with its contract, the default kind first. */
export function forwardAuthKinds(): Array<{ kind: string; contract: ForwardAuthContract }> {
    return [...contracts].map(([kind, contract]) => ({ kind, contract }));
}

/** The sign-in page of the loaded kind whose page `path` (a Location's path) is on; undefined when it is none of theirs. */
export function signInPageOf(path: string): string | undefined {
    return forwardAuthKinds().find(({ contract }) => path.startsWith(contract.signInPath))?.contract.signInPath;
}

/** Whether a redirect's Location goes to a loaded kind's outpost or sign-in page: nginx sends the visitor to sign in. */
export function sendsToSignIn(location: string | undefined | null): boolean {
    return forwardAuthKinds().some(({ contract }) =>
        Boolean(location?.includes(contract.outpostPath) || location?.includes(contract.signInPath)),
    );
}
