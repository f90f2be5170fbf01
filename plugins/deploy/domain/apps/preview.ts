import Fs from 'node:fs';
import Path from 'node:path';

import type { Server } from '@hapi/hapi';

import { lintCompose, lintContextFor, parseCompose, validateCompose } from '../compose/compose-model.ts';
import type { Finding } from '../findings/finding.ts';
import { checkSite, parseSite, sitePlaces } from '../nginx/site-model.ts';
import { draftFiles } from './app-files.ts';
import { type AppRecord, apps } from './app-service.ts';
import { checkAvailability } from './availability.ts';

type Action = 'create' | 'update' | 'unchanged' | 'obtain' | 'keep' | 'not managed';

function fileAction(path: string, content: string): Action {
    if (!Fs.existsSync(path)) {
        return 'create';
    }

    return Fs.readFileSync(path, 'utf8') === content ? 'unchanged' : 'update';
}

/** What a deploy of the draft would do, what it would write (secrets masked), what lint says; nothing is changed. */
export async function previewApp(server: Server, app: AppRecord) {
    const service = apps(server);
    const spec = parseCompose(app.draft.compose);
    const secrets = await service.secretsOf(app.name);
    const written = await draftFiles(server, app, true);
    const shown = await draftFiles(server, app, false);
    const places = sitePlaces(server.app.config, { name: app.name, domain: app.domain });
    const site = parseSite(app.draft.nginx, places);
    const lint: Finding[] = [
        ...(await validateCompose(spec, { secrets, checkHostPorts: false })),
        ...lintCompose(spec, lintContextFor(server.app.config, { app: app.name, values: secrets })),
        ...checkSite(site.spec, places),
    ];
    const certificateDir = Path.join(server.app.config.apps.certificatesDir, app.domain);
    const plan = {
        files: written.map((file) => ({ path: file.path, kind: file.kind, action: fileAction(file.path, file.content) })),
        containers: Object.entries(spec.services).map(([name, definition]) => ({
            service: name,
            container: `${app.name}-${name}-1`,
            image: definition.image ?? null,
            action: 'create' as Action,
        })),
        networks: [`${app.name}_default`, ...Object.keys(spec.networks ?? {}).map((network) => `${app.name}_${network}`)].map((name) => ({
            name,
            action: 'create' as Action,
        })),
        volumes: Object.keys(spec.volumes ?? {}).map((volume) => ({ name: `${app.name}_${volume}`, action: 'create' as Action })),
        site: { path: service.sitePath(app.name), action: fileAction(service.sitePath(app.name), app.draft.nginx) },
        certificate: { domain: app.domain, action: (Fs.existsSync(certificateDir) ? 'keep' : 'obtain') as Action },
        dns: { record: app.domain, action: 'not managed' as Action },
    };
    return { plan, files: shown, lint, availability: await checkAvailability(server, app.name) };
}
