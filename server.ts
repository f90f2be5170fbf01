import Path from 'node:path';
import { fileURLToPath } from 'node:url';

import Hapi from '@hapi/hapi';
import Inert from '@hapi/inert';
import type { Knex } from 'knex';

import './lib/context.ts';
import { type Config, ConfigError, loadConfig } from './lib/config.ts';
import { loadMasterKey, Sealer } from './lib/crypto.ts';
import { registerErrorShapes } from './lib/errors.ts';
import { loggingPlugin } from './lib/logging.ts';
import { registerDeployApi } from './lib/spec/deploy-loader.ts';
import { registerGitApi } from './lib/spec/git-loader.ts';
import { dbPlugin } from './plugins/db.ts';
import { accessCheck, type OperationAccess } from './plugins/git/domain/identity/access.ts';
import { GIT_AUTH_STRATEGY, registerGitAuth } from './plugins/git/domain/identity/auth.ts';
import { docsPlugin } from './plugins/docs.ts';
import { deployRouteExtensions, deploySecurityPlugin, SESSION_STRATEGY } from './plugins/deploy/security.ts';
import { idpPlugin } from './plugins/idp/index.ts';
import { RecipeError } from './plugins/deploy/domain/recipes/recipe-files.ts';
import { recipes } from './plugins/deploy/domain/recipes/recipe-service.ts';
import { jobsPlugin } from './plugins/jobs.ts';
import { packageRegistryPlugin } from './plugins/git/routes/package-registry.ts';
import { runnerProtocolPlugin } from './plugins/git/routes/runner-protocol.ts';
import { webPlugin } from './plugins/web.ts';

export const ROOT_DIR = Path.dirname(fileURLToPath(import.meta.url));
export const GIT_SWAGGER_FILE = Path.join(ROOT_DIR, 'specs', 'git', 'swagger.v1.json');
const DEPLOY_SPECS_DIR = Path.join(ROOT_DIR, 'specs', 'deploy');
/** The deploy manager's web UI as Vite builds it (npm run build:web). */
export const WEB_DIST_DIR = Path.join(ROOT_DIR, 'web', 'dist');

export interface ServerOptions {
    /** A knex the caller owns (tests); otherwise one is made from DATABASE_URL. */
    knex?: Knex;
    /** Request logging; off in tests unless asked for. */
    logging?: boolean;
}

/** Builds the server with every plugin registered; it is initialized but not listening. */
export async function createServer(config: Config, options: ServerOptions = {}): Promise<Hapi.Server> {
    const server = Hapi.server({
        port: config.port,
        host: config.listenHost,
        router: { stripTrailingSlash: false },
        routes: {
            payload: { maxBytes: 10 * 1024 * 1024 },
            response: { emptyStatusCode: 204 },
        },
    });
    server.app.config = config;
    server.app.sealer = new Sealer(loadMasterKey(config.dataDir, config.masterKey));

    if (options.logging ?? true) {
        await server.register(loggingPlugin(config.logLevel));
    }

    registerErrorShapes(server, `${config.publicUrl}api/swagger`);
    await server.register([Inert, { plugin: dbPlugin, options: { databaseUrl: config.databaseUrl, knex: options.knex } }]);
    await server.register({ plugin: docsPlugin, options: { swaggerFile: GIT_SWAGGER_FILE } });
    await server.register(jobsPlugin);

    const missing: string[] = [];
    if (config.services.includes('git')) {
        registerGitAuth(server);
        const auth = { strategy: GIT_AUTH_STRATEGY, accessCheck: (access: unknown) => accessCheck(access as OperationAccess) };
        const handlersRoot = Path.join(ROOT_DIR, 'plugins', 'git', 'routes');
        const domainRoot = Path.join(ROOT_DIR, 'plugins', 'git', 'domain');
        missing.push(...(await registerGitApi(server, { swaggerFile: GIT_SWAGGER_FILE, handlersRoot, domainRoot, auth })));
        await server.register(packageRegistryPlugin);
        await server.register(runnerProtocolPlugin);
    }

    if (config.services.includes('deploy')) {
        // A recipe file that is not valid stops the start here, naming the file and the field.
        recipes(server).shipped();
        await server.register([deploySecurityPlugin, idpPlugin]);
        missing.push(
            ...(await registerDeployApi(server, {
                specsDir: DEPLOY_SPECS_DIR,
                handlersRoot: Path.join(ROOT_DIR, 'plugins', 'deploy', 'routes'),
                domainRoot: Path.join(ROOT_DIR, 'plugins', 'deploy', 'domain'),
                authStrategy: SESSION_STRATEGY,
                extensions: deployRouteExtensions(server),
            })),
        );
        await server.register({ plugin: webPlugin, options: { distDir: WEB_DIST_DIR } });
    } else {
        // The health check belongs to the process, whichever services it hosts.
        server.route({ method: 'GET', path: '/api/health', handler: () => ({ status: 'ok' }) });
    }

    server.app.missingOperations = missing;
    if (missing.length > 0) {
        server.log(['warn', 'startup'], `operations without a handler (answer 501): ${missing.join(', ')}`);
    }

    await server.initialize();
    return server;
}

/** Stops on SIGTERM or SIGINT: no new connections, requests in flight finish, the database closes. */
function stopOnSignals(server: Hapi.Server): void {
    const stop = async (signal: string) => {
        server.log(['info', 'shutdown'], `${signal}: stopping`);
        await server.stop({ timeout: 10_000 });
        process.exit(0);
    };
    process.once('SIGTERM', () => void stop('SIGTERM'));
    process.once('SIGINT', () => void stop('SIGINT'));
}

async function main(): Promise<void> {
    let config: Config;
    try {
        config = loadConfig();
    } catch (error) {
        if (error instanceof ConfigError) {
            console.error(error.message);
            process.exit(2);
        }

        throw error;
    }

    const server = await createServer(config).catch((error: unknown) => {
        if (error instanceof RecipeError) {
            console.error(error.message);
            process.exit(2);
        }

        throw error;
    });
    await server.start();
    stopOnSignals(server);
    server.log(['info', 'startup'], `Gatehouse listening on ${server.info.uri} (public URL ${config.publicUrl})`);
}

if (process.argv[1] && Path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
    main().catch((error: unknown) => {
        console.error(error);
        process.exit(1);
    });
}
