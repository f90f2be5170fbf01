/**
 * Saving a working app's setup as a recipe (`POST /api/apps/{name}/recipe`): its method, the variables the person
 * ticked with this app's own values (domain, URL, client id, issuer, gateway, admin) put back as placeholders, and
 * the steps and notes given. The next app made from the image receives it, as a tested recipe.
 */
import Fs from 'node:fs';

import type { Server } from '@hapi/hapi';

import { ValidationError } from '../../../../lib/errors.ts';
import { CLIENT_SECRET_VARIABLE } from '../../../sso/method-types.ts';
import { appliedMethod, lastCheck, methodSettingsOf } from '../access/identity.ts';
import type { DeployUser } from '../accounts/user-service.ts';
import { type AppRecord, apps } from '../apps/app-service.ts';
import { parseCompose } from '../compose/compose-model.ts';
import { appPaths } from '../engine/run-context.ts';
import { dockerClient, networkGateway } from '../host/docker-client.ts';
import { mainService } from './recipe-compose.ts';
import { recipeProblems } from './recipe-files.ts';
import { recipes } from './recipe-service.ts';
import type { Recipe, RecipeFields, RecipeMethod } from './recipe-types.ts';

export interface RecipeRequest {
    keys: string[];
    steps?: string[];
    notes?: string;
}

const SECRET_REFERENCE = /\$\{?([A-Za-z_][A-Za-z0-9_]*)/g;

/** This app's values and the placeholders that stand for them, longest first so that a URL goes before its host. */
async function replacementsOf(
    server: Server,
    app: AppRecord,
): Promise<{ within: Array<[string, string]>; whole: Array<[string, string]> }> {
    const settings = await methodSettingsOf(server, app, { adminEmail: true });
    const oidc = settings.oidc;
    const gateway = await networkGateway(dockerClient(), `${app.name}_default`).catch(() => undefined);
    const candidates: Array<[string | undefined, string]> = [
        [oidc?.endpoints.configUrl, '{{OIDC_CONFIG_URL}}'],
        [oidc?.endpoints.logoutUrl, '{{OIDC_LOGOUT_URL}}'],
        [oidc?.endpoints.issuer, '{{OIDC_ISSUER}}'],
        [oidc?.clientId, '{{OIDC_CLIENT_ID}}'],
        [settings.origin, '{{URL}}'],
        [settings.domain, '{{FQDN}}'],
        [settings.idpUrl, '{{IDP_URL}}'],
        [settings.adminEmail, '{{ADMIN_EMAIL}}'],
        [gateway, '{{GATEWAY}}'],
        [`\${${CLIENT_SECRET_VARIABLE}}`, '{{OIDC_CLIENT_SECRET}}'],
    ];
    const present = candidates.filter((pair): pair is [string, string] => Boolean(pair[0])).sort((a, b) => b[0].length - a[0].length);
    // A user name is short and common: only a variable that is the name alone stands for the admin account.
    return { within: present, whole: settings.adminUser ? [[settings.adminUser, '{{ADMIN_USER}}']] : [] };
}

function withPlaceholders(value: string, replacements: { within: Array<[string, string]>; whole: Array<[string, string]> }): string {
    const whole = replacements.whole.find(([text]) => text === value);
    if (whole) {
        return whole[1];
    }

    return replacements.within.reduce((text, [found, placeholder]) => text.split(found).join(placeholder), value);
}

/** The ticked variables of the app's main service as it runs, with placeholders; a variable holding a secret is refused. */
async function tickedVariables(server: Server, app: AppRecord, keys: string[]): Promise<{ env: Record<string, string>; service: string }> {
    const composeFile = appPaths(server.app.config, app.name).composeFile;
    const spec = parseCompose(Fs.readFileSync(composeFile, 'utf8'));
    const service = mainService(spec, { image: app.image ?? '' });
    const environment = service ? (spec.services[service]?.environment ?? {}) : {};
    if (!service) {
        throw new ValidationError(`the compose file of ${app.name} has several services and none runs ${app.image ?? 'its image'}`);
    }

    const secrets = await apps(server).secretsOf(app.name);
    const replacements = await replacementsOf(server, app);
    const env: Record<string, string> = {};
    for (const key of keys) {
        const value = environment[key];
        if (value === undefined || value === null) {
            throw new ValidationError(`keys: ${key} is not a variable of ${app.name}'s service ${service}`);
        }

        const shown = withPlaceholders(value, replacements);
        const secret = [...shown.matchAll(SECRET_REFERENCE)].map((match) => match[1]).find((name) => name !== undefined);
        const literal = Object.values(secrets).some((secretValue) => secretValue.length >= 4 && shown.includes(secretValue));
        if (secret || literal) {
            throw new ValidationError(`keys: ${key} holds a secret${secret ? ` (${secret})` : ''}; a recipe keeps no secrets`);
        }

        env[key] = shown;
    }

    return { env, service };
}

export async function saveAppRecipe(server: Server, name: string, actor: DeployUser, request: RecipeRequest): Promise<Recipe> {
    const app = await apps(server).require(name);
    const { method } = await appliedMethod(server, app);
    if (app.state !== 'running' || method === '' || !app.image) {
        throw new ValidationError(
            `${app.name} is not a running app made from an image with a sign-in method: save a recipe from a working one`,
        );
    }

    const check = await lastCheck(server, app.name);
    if (!check?.ok) {
        throw new ValidationError(
            `${app.name}'s last sign-in check did not pass${check ? ` (${check.text})` : ''}: save a recipe from a working app`,
        );
    }

    const { env, service } = await tickedVariables(server, app, [...new Set(request.keys)]);
    const login = app.draft.login;
    const fields: RecipeFields = {
        image: app.image,
        title: app.title,
        method: method as RecipeMethod,
        level: 'tested',
        ...(Object.keys(env).length > 0 ? { env } : {}),
        ...(request.steps && request.steps.length > 0 ? { steps: request.steps } : {}),
        ...(login ? { login } : {}),
        ...(app.draft.samlAcs ? { samlAcs: app.draft.samlAcs } : {}),
        service,
        sources: [`${server.app.config.publicUrl}api/apps/${app.name}`],
    };
    const problems = recipeProblems(fields);
    if (problems.length > 0) {
        throw new ValidationError(problems.join('; '));
    }

    return await recipes(server).save({
        image: app.image,
        app: app.name,
        savedBy: actor.email,
        fields,
        ...(request.notes ? { notes: request.notes } : {}),
    });
}
