/**
 * Undoing a run from its journal, after its server was killed mid-run: each change it wrote down is put back, last
 * first, as its own rollback would have; every undo is tried even when one fails, and each is reported in the run.
 */
import Fs from 'node:fs';

import type Docker from 'dockerode';

import { loadIdpKind } from '../../../idp/idp-kinds.ts';
import { undoneText } from '../../../sso/provider-work.ts';
import { dockerClient } from '../host/docker-client.ts';
import type { RunContext } from './run-context.ts';
import { writeFileAtomically } from './run-context.ts';
import { forgetJournal, type JournalEntry, journalOf } from './run-journal.ts';
import { putBackDnsRecord } from './dns-steps.ts';
import { testAndReload } from './site-steps.ts';
import { SwarmEngine } from './swarm-engine.ts';
import { removeObject } from './swarm-objects.ts';

export interface Recovery {
    undone: string[];
    failed: string[];
}

/** A container, volume or network already gone needs no undo. */
async function unlessGone<T>(work: () => Promise<T>, gone: T): Promise<T> {
    try {
        return await work();
    } catch (error) {
        if ((error as { statusCode?: number }).statusCode === 404) return gone;
        throw error;
    }
}

function undoFile(entry: Extract<JournalEntry, { type: 'file' }>): string {
    if (entry.backup === null) {
        Fs.rmSync(entry.path, { force: true });
        return `removed ${entry.path}`;
    }

    writeFileAtomically(entry.path, Fs.readFileSync(entry.backup, 'utf8'), entry.mode);
    return `restored ${entry.path}`;
}

async function putBack(docker: Docker, entry: Extract<JournalEntry, { type: 'set-aside' }>): Promise<string> {
    const handle = docker.getContainer(entry.id);
    const info = await unlessGone(() => handle.inspect(), undefined);
    if (!info) {
        return `${entry.name} was already gone`;
    }

    if (info.Name !== `/${entry.name}`) {
        await handle.rename({ name: entry.name });
    }

    if (entry.wasRunning && !info.State.Running) {
        await handle.start();
    }

    return `put back ${entry.name}`;
}

async function undoAccess(context: RunContext, entry: Extract<JournalEntry, { type: 'access' }>): Promise<string> {
    if (entry.existed && !entry.forwardAuth && !entry.method) {
        return `${entry.objectName} was the app's before the run and stays at the identity provider as the run left it`;
    }

    const access = context.data.access;
    if (!access) {
        throw new Error(`no identity provider is connected, so ${entry.objectName} stays there (recorded as the app's)`);
    }

    const kind = await loadIdpKind(access.connection.kind);
    const provider = kind.connect({ url: access.connection.url, token: access.connection.token });
    if (entry.existed && entry.forwardAuth) {
        await provider.undoForwardAuthApp(entry.forwardAuth.app, entry.forwardAuth.changes);
        return undoneText(entry.objectName, entry.forwardAuth.changes);
    }

    if (entry.existed && entry.method) {
        const work = entry.method;
        await (work.kind === 'oidc'
            ? provider.undoOidcClient(work.client, work.changes)
            : provider.undoSamlProvider(work.app, work.changes));
        return undoneText(entry.objectName, work.changes);
    }

    const removed = await provider.removeApplication(entry.objectName);
    await context.forgetResource('access', entry.objectName);
    return `removed ${removed.length > 0 ? removed.join(' and ') : `nothing (${entry.objectName} was already gone)`} at the identity provider`;
}

async function undoEntry(context: RunContext, docker: Docker, entry: JournalEntry, hooks: RecoveryHooks): Promise<string> {
    switch (entry.type) {
        case 'file':
            return undoFile(entry);
        case 'container':
            await unlessGone(() => docker.getContainer(entry.name).remove({ force: true }), undefined);
            return `removed container ${entry.name}`;
        case 'set-aside':
            return await putBack(docker, entry);
        case 'volume':
            await unlessGone(() => docker.getVolume(entry.name).remove(), undefined);
            return `removed volume ${entry.name}`;
        case 'network':
            await unlessGone(() => docker.getNetwork(entry.name).remove(), undefined);
            return `removed network ${entry.name}`;
        case 'service':
            await unlessGone(() => docker.getService(entry.name).remove(), undefined);
            return `removed service ${entry.name}`;
        case 'service-update':
            return await new SwarmEngine(docker, context.config.host, context.log).rollBackService(entry.id, entry.name);
        case 'swarm-object':
            await removeObject(docker, entry.kind, entry.name);
            return `removed the ${entry.kind} ${entry.name}`;
        case 'access':
            return await undoAccess(context, entry);
        case 'dns':
            return await putBackDnsRecord(context, entry);
        case 'draft':
            if (!hooks.draft) throw new Error('nothing here can put the draft back');
            return await hooks.draft(entry.sealed);
    }
}

/** What only the server can undo: the app's draft is in its database, sealed with its key. */
export interface RecoveryHooks {
    draft?: (sealed: string) => Promise<string>;
}

/** Undoes what the journal of the context's run holds, then forgets it. */
export async function undoFromJournal(context: RunContext, hooks: RecoveryHooks = {}): Promise<Recovery> {
    context.step = 'recovery';
    const knex = await context.database();
    const entries = (await journalOf(knex, context.data.runId)).reverse();
    const recovery: Recovery = { undone: [], failed: [] };
    const attempt = async (what: string, work: () => Promise<string>) => {
        try {
            const done = await work();
            recovery.undone.push(done);
            context.log(`Undone: ${done}`, 'warning');
        } catch (error) {
            recovery.failed.push(`${what}: ${(error as Error).message}`);
            context.log(`Could not undo ${what}: ${(error as Error).message}`, 'error');
        }
    };

    const docker = dockerClient();
    for (const entry of entries) {
        await attempt(describe(entry), () => undoEntry(context, docker, entry, hooks));
    }

    if (entries.some((entry) => entry.type === 'file' && entry.path === context.paths.siteFile)) {
        await attempt('the reload of nginx', async () => {
            await testAndReload(context);
            return 'nginx configuration restored and reloaded';
        });
    }

    await forgetJournal(knex, context.config.dataDir, context.data.runId);
    return recovery;
}

function describe(entry: JournalEntry): string {
    switch (entry.type) {
        case 'file':
            return entry.path;
        case 'container':
        case 'network':
        case 'volume':
        case 'service':
            return `the ${entry.type} ${entry.name}`;
        case 'service-update':
            return `the update of the service ${entry.name}`;
        case 'swarm-object':
            return `the ${entry.kind} ${entry.name}`;
        case 'set-aside':
            return `the previous ${entry.name}`;
        case 'access':
            return entry.objectName;
        case 'dns':
            return `the DNS record of ${entry.domain}`;
        case 'draft':
            return "the app's draft";
    }
}
