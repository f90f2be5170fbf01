import Fs from 'node:fs';
import Path from 'node:path';

import type { Server } from '@hapi/hapi';

import {
    type FileCheckOptions,
    lintComposeWithImages,
    lintContextFor,
    parseCompose,
    sitePortFindings,
    validateCompose,
} from '../compose/compose-model.ts';
import type { Finding } from '../findings/finding.ts';
import { checkSite, parseSite, sitePlaces } from '../nginx/site-model.ts';
import { type AppFile, draftFiles, maskSiteCredentials } from './app-files.ts';
import { type AppRecord, apps } from './app-service.ts';
import { checkAvailability } from './availability.ts';
import { idpConnection } from '../../../idp/connection-service.ts';
import { loadMethod } from '../../../sso/methods.ts';
import { appliedMethod } from '../access/identity.ts';
import { accessForRun } from '../access/run-site.ts';
import { accessObjectName } from '../engine/access-steps.ts';

type Action = 'create' | 'update' | 'unchanged' | 'obtain' | 'keep' | 'not managed';

function fileAction(path: string, content: string): Action {
    if (!Fs.existsSync(path)) {
        return 'create';
    }

    return Fs.readFileSync(path, 'utf8') === content ? 'unchanged' : 'update';
}

/** The app's nginx site as its draft has it, read with the places the app's site may use. */
function draftSite(server: Server, app: AppRecord) {
    const places = sitePlaces(server.app.config, { name: app.name, domain: app.domain });
    return { places, site: parseSite(app.draft.nginx, places) };
}

/**
 * How a compose file is judged for an app, as its preview judges its draft: with the app's secrets (the given
 * ones over them), its folder and its site. Host ports are probed only for an app never deployed: once it is,
 * its own containers hold them.
 */
export async function composeCheckOptions(server: Server, app: AppRecord, secrets: Record<string, string> = {}): Promise<FileCheckOptions> {
    const values = { ...(await apps(server).secretsOf(app.name)), ...secrets };
    return {
        secrets: values,
        lint: lintContextFor(server.app.config, { app: app.name, values }),
        checkHostPorts: app.state === 'draft',
        site: draftSite(server, app).site.spec.locations,
    };
}

/** The files with `site` as the nginx site's content; `masked`: credentials in it are masked. */
function withSite(files: AppFile[], site: string, masked = false): AppFile[] {
    return files.map((file) => (file.kind === 'nginx' ? { ...file, content: site, masked } : file));
}

/** What a deploy of the draft would do, what it would write (secrets masked), what lint says; nothing is changed. */
export async function previewApp(server: Server, app: AppRecord) {
    const service = apps(server);
    const spec = parseCompose(app.draft.compose);
    const secrets = await service.secretsOf(app.name);
    // The site as the deploy writes it: behind the connected provider's forward auth, with the sign-in method's part.
    const { site: deployedSite } = await accessForRun(server, app, 'deploy');
    const written = withSite(await draftFiles(server, app, true), deployedSite);
    const shownSite = maskSiteCredentials(deployedSite);
    const shown = withSite(await draftFiles(server, app, false), shownSite, shownSite !== deployedSite);
    const { places, site } = draftSite(server, app);
    const lint: Finding[] = [
        ...(await validateCompose(spec, { secrets, checkHostPorts: false })),
        ...sitePortFindings(spec, site.spec.locations, secrets),
        ...(await lintComposeWithImages(spec, lintContextFor(server.app.config, { app: app.name, values: secrets }))),
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
        site: { path: service.sitePath(app.name), action: fileAction(service.sitePath(app.name), deployedSite) },
        certificate: { domain: app.domain, action: (Fs.existsSync(certificateDir) ? 'keep' : 'obtain') as Action },
        dns: { record: app.domain, action: 'not managed' as Action },
        access: await providerObjects(server, app),
    };
    return { plan, files: shown, lint, availability: await checkAvailability(server, app.name, app) };
}

/**
 * What the deploy makes or updates at the identity provider: forward auth's provider and application with the
 * groups bound, and the sign-in method's own objects; none without a connected provider (the app is public).
 */
async function providerObjects(server: Server, app: AppRecord): Promise<Array<{ name: string; detail: string; action: Action }>> {
    if (!(await idpConnection(server).stored())) {
        return [];
    }

    const made = new Set(
        (await server.app.knex('dp_app_resources').where({ app_name: app.name, kind: 'access' }).select('name')).map((row) =>
            String(row.name),
        ),
    );
    const action = (name: string): Action => (made.has(name) ? 'update' : 'create');
    const groups = app.draft.auth?.groups ?? [];
    const who = groups.length > 0 ? `groups ${groups.map((group) => group.name).join(', ')} bound` : 'no group bound: every signed-in user';
    const forwardAuth = accessObjectName(app.name);
    const objects = [
        { name: forwardAuth, detail: `proxy provider and application (forward auth), ${who}, on the outpost`, action: action(forwardAuth) },
    ];
    const { method } = await appliedMethod(server, app);
    const methodObjects = (await loadMethod(method))?.providerObjects;
    const methodObject = methodObjects ? { name: methodObjects.name(app.name), detail: methodObjects.detail } : undefined;
    return methodObject ? [...objects, { ...methodObject, action: action(methodObject.name) }] : objects;
}
