/**
 * The auto-login hand-off (`GET /api/autologin/{name}`): only nginx, on loopback and carrying the app's token, may
 * ask; Gatehouse signs in to the app with its shared account and answers what to give the browser. Every refusal
 * and every failed sign-in is audited; the password and the token never are.
 */
import Fs from 'node:fs';

import type { Server } from '@hapi/hapi';

import { signInServerSide, appUpstream } from '../../../sso/methods/autologin.ts';
import type { AutoLoginOutcome } from '../../../sso/autologin/adapter-types.ts';
import { audit } from '../accounts/audit-service.ts';
import { apps } from '../apps/app-service.ts';
import { appPaths } from '../engine/run-context.ts';
import { readSite } from '../nginx/site-model.ts';
import { appliedMethod, methodSettingsOf } from './identity.ts';

export interface AutoLoginCaller {
    remoteAddress: string;
    token: string | undefined;
    /** The visitor's headers nginx passed on, for the app to see the same browser sign in. */
    visitorHeaders: Record<string, string>;
}

export type AutoLoginAnswer = { kind: 'refused'; reason: string } | ({ app: string } & AutoLoginOutcome & { kind: 'outcome' });

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

async function refuse(server: Server, name: string, caller: AutoLoginCaller, reason: string): Promise<AutoLoginAnswer> {
    await audit(server).record({
        action: 'apps.autologin',
        target: name,
        outcome: 'failure',
        clientAddress: caller.remoteAddress,
        details: { reason },
    });
    return { kind: 'refused', reason };
}

export async function autoLogin(server: Server, name: string, caller: AutoLoginCaller): Promise<AutoLoginAnswer> {
    if (!LOOPBACK.has(caller.remoteAddress)) {
        return await refuse(server, name, caller, 'not a loopback request');
    }

    const app = await apps(server).find(name);
    if (!app || !caller.token || !(await apps(server).isAutologinToken(app.name, caller.token))) {
        return await refuse(server, name, caller, 'no app with that token');
    }

    const siteFile = appPaths(server.app.config, app.name).siteFile;
    const upstream = Fs.existsSync(siteFile) ? appUpstream(readSite(Fs.readFileSync(siteFile, 'utf8')).spec) : undefined;
    if ((await appliedMethod(server, app)).method !== 'autologin' || !upstream) {
        return await refuse(server, name, caller, 'the app does not use the auto-login');
    }

    const sharedPassword = await apps(server).sharedPasswordOf(app.name);
    const settings = await methodSettingsOf(server, app, sharedPassword ? { sharedPassword } : {});
    const outcome = await signInServerSide(settings, upstream, caller.visitorHeaders);
    await audit(server).record({
        action: 'apps.autologin',
        target: app.name,
        outcome: outcome.ok ? 'success' : 'failure',
        clientAddress: caller.remoteAddress,
        details: outcome.ok ? { user: settings.sharedUser ?? '' } : { user: settings.sharedUser ?? '', reason: outcome.reason },
    });
    return { kind: 'outcome', app: app.name, ...outcome };
}
