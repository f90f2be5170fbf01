/**
 * The git hosting service as one hapi plugin: Gitea's API from its Swagger document (a plugin per tag, handlers
 * found by operationId), the package registry and the Actions runner protocol.
 */
import Path from 'node:path';

import type { Plugin } from '@hapi/hapi';

import { registerGitApi } from '../../lib/spec/git-loader.ts';
import { accessCheck, type OperationAccess } from './routes/shared/access.ts';
import { GIT_AUTH_STRATEGY, registerGitAuth } from './domain/identity/auth.ts';
import { packageRegistryPlugin } from './routes/package-registry.ts';
import { runnerProtocolPlugin } from './routes/runner-protocol.ts';

/**
 * The concepts whose setup.ts runs, in this order: the label templates before anything may create a repository
 * with them, webhook delivery before the cron tasks that may queue deliveries, notification threads listening
 * before any issue activity.
 */
export const GIT_SETUP_ORDER = ['templates', 'webhooks', 'notifications', 'cron'] as const;

export interface GitPluginOptions {
    /** Gitea's Swagger document. */
    swaggerFile: string;
}

export const gitPlugin: Plugin<GitPluginOptions> = {
    name: 'gatehouse-git',
    dependencies: ['db', 'jobs', 'docs'],
    register: async (server, { swaggerFile }) => {
        registerGitAuth(server);
        const auth = { strategy: GIT_AUTH_STRATEGY, accessCheck: (access: unknown) => accessCheck(access as OperationAccess) };
        const missing = await registerGitApi(server, {
            swaggerFile,
            handlersRoot: Path.join(import.meta.dirname, 'routes'),
            domainRoot: Path.join(import.meta.dirname, 'domain'),
            setupOrder: GIT_SETUP_ORDER,
            auth,
        });
        server.app.missingOperations.push(...missing);
        await server.register([packageRegistryPlugin, runnerProtocolPlugin]);
    },
};
