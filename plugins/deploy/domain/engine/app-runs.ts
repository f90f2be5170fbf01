/**
 * The runs that change the host, as a worker executes them: deploy (also after a compose update), nginx
 * update, restart/stop/start, delete. A deploy that fails anywhere is undone: files put back, previous
 * containers back, nginx configuration restored and valid; the run says what it undid.
 */
import Crypto from 'node:crypto';
import Fs from 'node:fs';

import { loadMasterKey } from '../../../../lib/crypto.ts';
import { fillYamlPlaceholders } from '../../../../lib/placeholder-fill.ts';
import { parseCompose } from '../compose/compose-parse.ts';
import { siteHasTls } from '../nginx/site-model.ts';
import { hasPlaceholderCertificate } from '../host/certificate-info.ts';
import { dockerClient } from '../host/docker-client.ts';
import { type AppEngine, freshOutcome, type UpOutcome } from './app-engine.ts';
import { ComposeEngine } from './compose-engine.ts';
import { SwarmEngine } from './swarm-engine.ts';
import { planProject } from './compose-plan.ts';
import type { ProjectPlan } from './plan-model.ts';
import { parseEnvFile } from './env-file.ts';
import { applyAccess, applyMethodAtProvider, checkMethodStep, checkSignInStep, ProviderUndo } from './access-steps.ts';
import { type FileSnapshot, type RunContext, restoreFile } from './run-context.ts';
import type { JournalEntry } from './run-journal.ts';
import { setDnsRecord } from './dns-steps.ts';
import { checkThroughNginx, ensureCertificateFiles, holdVisitors, testAndReload } from './site-steps.ts';

export class RolledBackError extends Error {}

const GATEWAY = 'GATEWAY';
const GATEWAY_PLACEHOLDER = `{{${GATEWAY}}}`;
const INIT_TIMEOUT_MS = 120_000;

/** The engine the app's services run on (DEPLOY_ENGINE): the Docker engine's containers, or a Swarm's services. */
export function engineOf(context: RunContext): AppEngine {
    const journal = async (entry: JournalEntry) => {
        await context.journal(entry);
    };
    return context.config.apps.engine === 'swarm'
        ? new SwarmEngine(dockerClient(), context.config.host, context.log, journal)
        : new ComposeEngine(dockerClient(), context.config.host, context.log, context.mask, journal);
}

export function upOptions(context: RunContext) {
    const { healthTimeoutSeconds, settleSeconds, pullTimeoutSeconds } = context.config.apps;
    return { healthTimeoutMs: healthTimeoutSeconds * 1000, settleMs: settleSeconds * 1000, pullTimeoutMs: pullTimeoutSeconds * 1000 };
}

/** The plan of the app as its files on disk describe it. */
export function planFromDisk(context: RunContext): ProjectPlan {
    const { composeFile, secretsFile, appDir } = context.paths;
    if (!Fs.existsSync(composeFile)) {
        throw new Error(`${composeFile} does not exist: deploy the app first`);
    }

    const values = Fs.existsSync(secretsFile) ? parseEnvFile(Fs.readFileSync(secretsFile, 'utf8')) : {};
    return planProject(parseCompose(Fs.readFileSync(composeFile, 'utf8')), {
        project: context.data.app,
        workingDir: appDir,
        composeFile,
        values,
        objectKey: objectNameKey(context),
    });
}

function planOf(context: RunContext, compose: string): ProjectPlan {
    const { composeFile, appDir } = context.paths;
    return planProject(parseCompose(compose), {
        project: context.data.app,
        workingDir: appDir,
        composeFile,
        values: context.data.values ?? {},
        objectKey: objectNameKey(context),
    });
}

const objectNameKeys = new WeakMap<RunContext, Buffer>();

/**
 * The key that names a swarm's secrets and configs after their values (and fingerprints them in compose mode's
 * container hashes): the server's own, derived for this use, once per run.
 */
function objectNameKey(context: RunContext): Buffer {
    const known = objectNameKeys.get(context);
    if (known) return known;
    const masterKey = loadMasterKey(context.config.dataDir, context.config.masterKey);
    const key = Crypto.createHmac('sha256', masterKey).update('swarm object names').digest();
    objectNameKeys.set(context, key);
    return key;
}

/**
 * The compose text with `{{GATEWAY}}` filled: the address nginx's requests reach the app from, known once the app's
 * network exists (made here, recorded in `outcome` so that a failed run removes it).
 */
async function composeWithGateway(context: RunContext, engine: AppEngine, compose: string, outcome: UpOutcome): Promise<string> {
    if (!fillYamlPlaceholders(compose, {}).unfilled.includes(GATEWAY)) {
        return compose;
    }

    const gateway = await engine.appNetworkGateway(planOf(context, compose), outcome);
    if (!gateway) {
        const why =
            context.config.apps.engine === 'swarm'
                ? ': on a swarm its tasks run on any node, and no one address reaches this host from all'
                : '';
        throw new Error(`the app's network has no gateway address to put in ${GATEWAY_PLACEHOLDER}${why}`);
    }

    context.log(`${GATEWAY_PLACEHOLDER} is ${gateway}, the gateway of the app's network`);
    return fillYamlPlaceholders(compose, { [GATEWAY]: gateway }).text;
}

/** The recipe's one-time commands; a command that fails fails the run (and so rolls it back). Never logs their text. */
async function runInitCommands(context: RunContext, engine: AppEngine, plan: ProjectPlan): Promise<void> {
    const init = context.data.init;
    if (!init) {
        return;
    }

    context.step = 'init';
    const service = plan.services.find((candidate) => candidate.service === init.service);
    if (!service) {
        throw new Error(`the recipe's init commands are for the service ${init.service}, which the compose file does not have`);
    }

    for (const [index, command] of init.commands.entries()) {
        const { exitCode, output } = await engine.execIn(service, command, {
            timeoutMs: INIT_TIMEOUT_MS,
            environment: init.environment,
            ...(init.user ? { user: init.user } : {}),
        });
        const which = `the recipe's init command ${index + 1} of ${init.commands.length} in ${init.service}`;
        if (exitCode !== 0) {
            // The output may echo the app's secrets (a command that was given its client secret): they are blanked.
            throw new Error(`${which} failed (exit ${exitCode ?? 'unknown'}): ${context.mask(output) || 'no output'}`);
        }

        context.log(`Ran ${which}`);
    }
}

export async function deployApp(context: RunContext): Promise<void> {
    const files = context.data.files;
    if (!files) {
        throw new Error('a deploy needs the files to write');
    }

    const engine = engineOf(context);
    const snapshots: FileSnapshot[] = [];
    let outcome: UpOutcome | undefined;
    const providerUndo = new ProviderUndo();
    let dnsUndo: (() => Promise<string>) | undefined;
    try {
        context.step = 'files';
        const { composeFile, secretsFile, siteFile, appDir } = context.paths;
        Fs.mkdirSync(appDir, { recursive: true, mode: 0o750 });
        const started = freshOutcome();
        outcome = started;
        const compose = await composeWithGateway(context, engine, files.compose, started);
        await context.writeFile(snapshots, composeFile, compose, 0o640);
        await context.writeFile(snapshots, secretsFile, files.secrets, 0o600);
        context.log(`Wrote ${composeFile} and ${secretsFile} (0600)`);
        await context.pauseIfAsked('files-written');

        context.step = 'images';
        const plan = planOf(context, compose);
        const { imageIds, pulled } = await engine.pullImages(plan, upOptions(context));

        context.step = 'containers';
        try {
            const holding = { ...upOptions(context), beforeReplacing: () => holdVisitors(context, snapshots) };
            outcome = await engine.up(plan, imageIds, holding, started);
        } catch (error) {
            outcome = (error as Error & { outcome?: UpOutcome }).outcome;
            throw error;
        }

        outcome.pulledImages = pulled;
        if (context.data.kind === 'sso' && outcome.created.length === 0) {
            // Nothing of the app's own configuration changed, but a changed sign-in is read anew only after a restart.
            await engine.restart(plan, upOptions(context));
        }

        context.log(`Services ready: ${plan.services.map((service) => service.service).join(', ')}`);
        await runInitCommands(context, engine, plan);
        await context.pauseIfAsked('access');
        const access = await applyAccess(context, siteHasTls(files.site), providerUndo);
        await applyMethodAtProvider(context, access, providerUndo);

        context.step = 'nginx';
        if (siteHasTls(files.site)) {
            await ensureCertificateFiles(context, snapshots);
        }

        await context.writeFile(snapshots, siteFile, files.site, 0o600);
        context.log(`Wrote ${siteFile} (0600)`);
        await context.pauseIfAsked('site-written');
        await testAndReload(context);

        dnsUndo = await setDnsRecord(context);
        if (siteHasTls(files.site)) {
            await obtainCertificateIfDue(context);
        }

        await context.pauseIfAsked('check');
        context.step = 'check';
        await checkThroughNginx(context, siteHasTls(files.site));
        await checkSignInStep(context, siteHasTls(files.site));
        await checkMethodStep(context, siteHasTls(files.site));
        await engine.commit(outcome);
        await recordCreated(context, outcome);
    } catch (error) {
        const changed = outcome;
        await rollBack(context, snapshots, error as Error, {
            ...(changed ? { containers: () => engine.rollback(changed) } : {}),
            ...(providerUndo.empty ? {} : { access: () => providerUndo.run() }),
            ...(dnsUndo ? { dns: dnsUndo } : {}),
        });
    }
}

async function recordCreated(context: RunContext, outcome: UpOutcome): Promise<void> {
    for (const image of outcome.pulledImages) await context.recordResource('image', image);
    for (const volume of outcome.createdVolumes) await context.recordResource('volume', volume);
}

async function obtainCertificateIfDue(context: RunContext): Promise<void> {
    const { host, apps } = context.config;
    const domain = context.data.domain;
    context.step = 'certificate';
    await context.pauseIfAsked('certificate');
    if (!host.acmeDirectoryUrl) {
        context.log('No ACME directory is configured (ACME_DIRECTORY_URL): the site keeps the certificate it has', 'warning');
        return;
    }

    // Loaded here, not with the module: acme-client takes a third of a second to load, before the containers.
    const { needsRenewal, obtainCertificate } = await import('../acme/acme-service.ts');
    if (!hasPlaceholderCertificate(apps.certificatesDir, domain) && !needsRenewal(apps.certificatesDir, domain, host)) {
        context.log(`The certificate of ${domain} is valid and not due for renewal`);
        return;
    }

    const info = await obtainCertificate({ domain, certificatesDir: apps.certificatesDir, host, log: (text) => context.log(text) });
    await context.recordResource('certificate', domain);
    context.log(`Certificate for ${domain} from ${info.issuer}, valid until ${info.notAfter}`);
    await testAndReload(context);
}

interface Undo {
    containers?: () => Promise<{ undone: string[]; failed: string[] }>;
    access?: () => Promise<string>;
    dns?: () => Promise<string>;
}

/**
 * Puts back the files the run changed, and the containers and the identity provider's objects when the run had
 * changed them. Every part is tried even when one fails, and each failure is reported.
 */
async function rollBack(context: RunContext, changed: FileSnapshot[], cause: Error, undo: Undo = {}) {
    context.log(`Failed: ${cause.message}`, 'error');
    context.step = 'rollback';
    const undone: string[] = [];
    const failed: string[] = [];
    const attempt = async (what: string, work: () => Promise<string[]>) => {
        try {
            undone.push(...(await work()));
        } catch (error) {
            failed.push(`${what}: ${(error as Error).message}`);
        }
    };

    if (undo.containers) {
        const containers = await undo.containers();
        undone.push(...containers.undone);
        failed.push(...containers.failed);
    }

    for (const snapshot of [...changed].reverse()) {
        await attempt(`could not put back ${snapshot.path}`, () => {
            restoreFile(snapshot);
            return Promise.resolve([`${snapshot.content === undefined ? 'removed' : 'restored'} ${snapshot.path}`]);
        });
    }

    if (changed.some((snapshot) => snapshot.path === context.paths.siteFile)) {
        await attempt('nginx was not reloaded', async () => {
            await testAndReload(context);
            return ['nginx configuration restored and reloaded'];
        });
    }

    const access = undo.access;
    if (access) {
        await attempt("the identity provider's objects were not all undone", async () => [await access()]);
    }

    const dns = undo.dns;
    if (dns) {
        await attempt('the DNS record was not put back', async () => [await dns()]);
    }

    failed.forEach((failure) => context.log(`The rollback could not undo this: ${failure}`, 'error'));
    if (failed.length > 0) {
        context.log(`Undone nonetheless: ${undone.length > 0 ? undone.join('; ') : 'nothing'}`, 'warning');
        throw new Error(`${cause.message}; the rollback failed too: ${failed.join('; ')}`);
    }

    context.log(`Rolled back: ${undone.length > 0 ? undone.join('; ') : 'nothing had changed'}`, 'warning');
    throw new RolledBackError(cause.message);
}

/** A new site text: written, tested with the rest of nginx's configuration, reloaded, checked; put back when anything fails. */
export async function applySite(context: RunContext): Promise<void> {
    const site = context.data.files?.site;
    if (site === undefined) {
        throw new Error('an nginx update needs the site to write');
    }

    const changed: FileSnapshot[] = [];
    try {
        context.step = 'nginx';
        if (siteHasTls(site)) {
            await ensureCertificateFiles(context, changed);
        }

        await context.writeFile(changed, context.paths.siteFile, site, 0o600);
        context.log(`Wrote ${context.paths.siteFile} (0600)`);
        await testAndReload(context);
        context.step = 'check';
        await checkThroughNginx(context, siteHasTls(site));
        await checkSignInStep(context, siteHasTls(site));
    } catch (error) {
        await rollBack(context, changed, error as Error);
    }
}

export async function actOnApp(context: RunContext): Promise<void> {
    const action = context.data.action ?? 'restart';
    context.step = action;
    const plan = planFromDisk(context);
    const engine = engineOf(context);
    if (action === 'stop') {
        await engine.stop(plan);
    } else if (action === 'start') {
        await engine.start(plan, upOptions(context));
    } else {
        await engine.restart(plan, upOptions(context));
    }

    context.log(`${action[0]?.toUpperCase()}${action.slice(1)}: done for ${plan.services.length} service(s)`);
}
