/** The scheduled renewal (jobs/renew-certificates.ts): which apps' certificates are due, renewing them, one nginx reload. */
import Fs from 'node:fs';

import type { Knex } from 'knex';

import type { Config } from '../../../../lib/config.ts';
import { certificatePaths, hasPlaceholderCertificate } from '../host/certificate-info.ts';
import { reloadNginx } from '../host/nginx-control.ts';
import { needsRenewal, obtainCertificate } from './acme-service.ts';
import type { RenewalSummary } from './renewal-events.ts';

export interface AppDomain {
    name: string;
    domain: string;
    state: string;
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
