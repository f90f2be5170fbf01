/**
 * What the server hears of the scheduled renewal (jobs/renew-certificates.ts, renewal.ts): its job's name, its
 * summary, and who is told of a certificate it could not renew. Apart from the renewal itself, so that the setups
 * that schedule it and listen to it do not load the renewal and the ACME client's side of it.
 */
import type { Server } from '@hapi/hapi';

export const RENEWAL_JOB = 'renew-certificates';

export interface RenewalSummary {
    renewed: string[];
    failed: Array<{ domain: string; error: string }>;
    /** Set when certificates were renewed but nginx refused to reload (it keeps serving the old ones). */
    reloadError?: string;
}

type RenewalFailureListener = (domain: string, error: string) => Promise<void>;
const failureListeners = new WeakMap<object, RenewalFailureListener[]>();

/** Hears of each certificate the scheduled renewal could not renew (a higher concept registers in its setup). */
export function onRenewalFailed(server: Server, listener: RenewalFailureListener): void {
    failureListeners.set(server.app, [...renewalFailureListeners(server), listener]);
}

export function renewalFailureListeners(server: Server): RenewalFailureListener[] {
    return failureListeners.get(server.app) ?? [];
}
