/**
 * The application deployment manager as one hapi plugin: its security (sessions, CSRF, roles), the identity
 * provider's connection, its API from the YAML specs (a plugin per file, handlers found by name) and its web UI.
 */
import Path from 'node:path';

import type { Plugin } from '@hapi/hapi';

import { registerDeployApi } from '../../lib/spec/deploy-loader.ts';
import { loadIdpKinds, useIdpKindFolders } from '../idp/idp-kinds.ts';
import { idpPlugin } from '../idp/index.ts';
import { loadAddedAdapters } from '../sso/autologin/adapters.ts';
import { useAddedMethods } from '../sso/methods.ts';
import { webPlugin } from '../web.ts';
import { auditExtensions } from './audit-trail.ts';
import { refreshDeploySpecDefinitions } from './domain/apps/spec-definitions.ts';
import { recipes } from './domain/recipes/recipe-service.ts';
import { deployRouteExtensions, deploySecurityPlugin, SESSION_STRATEGY } from './security.ts';

/**
 * The concepts whose setup.ts runs, in this order: the DNS provider first (a wrong DNS_PROVIDER stops the start),
 * accounts (the setup token) and OIDC sign-in, then runs (taking over interrupted ones, which may need the others'
 * services), then certificate renewal, notifications, the resources sampler, the backup schedule, the update check and
 * the terminal's WebSocket.
 */
export const DEPLOY_SETUP_ORDER = [
    'dns',
    'accounts',
    'oidc',
    'runs',
    'acme',
    'notifications',
    'stats',
    'backups',
    'updates',
    'terminal',
] as const;

export interface DeployPluginOptions {
    /** The YAML route specs. */
    specsDir: string;
    /** The built web UI. */
    webDistDir: string;
}

export const deployPlugin: Plugin<DeployPluginOptions> = {
    name: 'gatehouse-deploy',
    dependencies: ['db', 'jobs'],
    register: async (server, { specsDir, webDistDir }) => {
        // The identity-provider kinds there are (a file that is not one stops the start), for the connection and the sites.
        useIdpKindFolders(server.app.config.idpKindDirs);
        await loadIdpKinds();
        // The auto-login adapters of AUTOLOGIN_ADAPTERS_DIRS and the sign-in methods of SIGN_IN_METHODS_DIRS (a file
        // there that is not one stops the start).
        await loadAddedAdapters(server.app.config.apps.autologinAdapterDirs);
        await useAddedMethods(server.app.config.apps.signInMethodDirs);
        // What the drop-in parts decide for this start (the sign-in methods and adapters there are), for the specs and the recipes.
        const definitions = refreshDeploySpecDefinitions(server.app.config.apps.autologinAdapterDirs);
        // A recipe file that is not valid stops the start here, naming the file and the field.
        recipes(server).shipped();
        await server.register([deploySecurityPlugin, idpPlugin]);
        const missing = await registerDeployApi(server, {
            specsDir,
            handlersRoot: Path.join(import.meta.dirname, 'routes'),
            domainRoot: Path.join(import.meta.dirname, 'domain'),
            setupOrder: DEPLOY_SETUP_ORDER,
            allDefinitions: definitions,
            authStrategy: SESSION_STRATEGY,
            extensions: { ...deployRouteExtensions(server), ...auditExtensions() },
            documentPath: '/api/openapi.json',
            checkResponses: server.app.config.deploy.checkResponses,
        });
        server.app.missingOperations.push(...missing);
        await server.register({ plugin: webPlugin, options: { distDir: webDistDir } });
    },
};
