/** The scheduled renewal (jobs/renew-certificates.ts): which apps' certificates are due, renewing them, one nginx reload. */
import Fs from 'node:fs';

import type { Server } from '@hapi/hapi';
import type { Knex } from 'knex';

import type { Config } from '../../../../lib/config.ts';
import { certificatePaths, hasPlaceholderCertificate } from '../host/certificate-info.ts';
import { reloadNginx } from '../host/nginx-control.ts';
import { needsRenewal, obtainCertificate } from './acme-service.ts';

export const RENEWAL_JOB = 'renew-certificates';

export interface AppDomain {
    name: string;
    domain: string;
    state: string;
}

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

/** The states of an app that has been deployed; such an app should have a certificate even when it has none yet. */
const DEPLOYED = new Set(['running', 'stopped']);

/** Apps past their draft, as the deploy manager stores them. */
export async function appDomains(knex: Knex): Promise<AppDomain[]> {
    const rows: AppDomain[] = await knex('dp_apps').whereNot({ state: 'draft' }).orderBy('name').select('name', 'domain', 'state');
    return rows.map((row) => ({ name: String(row.name), domain: String(row.domain), state: String(row.state) }));
}

/** Domains whose certificate is due and that have one already or belong to a deployed app; each domain once. */
export function dueDomains(config: Config, apps: AppDomain[], at = Date.now()): string[] {
    const { certificatesDir } = config.apps;
    const due = apps.filter(
        (app) =>
            app.state !== 'draft' &&
            (DEPLOYED.has(app.state) || Fs.existsSync(certificatePaths(certificatesDir, app.domain).dir)) &&
            (needsRenewal(certificatesDir, app.domain, config.host, at) || hasPlaceholderCertificate(certificatesDir, app.domain)),
    );
    return [...new Set(due.map((app) => app.domain))];
}

/** Renews the due certificates one after another; one failure does not stop the others. */
export async function renewCertificates(
    config: Config,
    apps: AppDomain[],
    log: (text: string) => void = () => {},
): Promise<RenewalSummary> {
    const summary: RenewalSummary = { renewed: [], failed: [] };
    for (const domain of dueDomains(config, apps)) {
        try {
            await obtainCertificate({ domain, certificatesDir: config.apps.certificatesDir, host: config.host, log });
            summary.renewed.push(domain);
        } catch (error) {
            summary.failed.push({ domain, error: (error as Error).message });
        }
    }

    if (summary.renewed.length > 0) {
        const reload = await reloadNginx(config.host);
        if (!reload.ok) {
            summary.reloadError = reload.output;
        }
    }

    return summary;
}
