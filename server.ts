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
import { ROOT_DIR } from './lib/paths.ts';
import { guardPayloadDecoders } from './lib/payload-decoders.ts';
import { dbPlugin } from './plugins/db.ts';
import { deployPlugin } from './plugins/deploy/index.ts';
import { gitPlugin } from './plugins/git/index.ts';
import { docsPlugin } from './plugins/docs.ts';
import { RecipeError } from './plugins/deploy/domain/recipes/recipe-files.ts';
import { jobsPlugin } from './plugins/jobs.ts';

export { ROOT_DIR };
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
    guardPayloadDecoders(server);
    server.app.config = config;
    server.app.sealer = new Sealer(loadMasterKey(config.dataDir, config.masterKey));

    if (options.logging ?? true) {
        await server.register(loggingPlugin(config.logLevel));
    }

    registerErrorShapes(server, `${config.publicUrl}api/swagger`);
    await server.register([Inert, { plugin: dbPlugin, options: { databaseUrl: config.databaseUrl, knex: options.knex } }]);
    await server.register({ plugin: docsPlugin, options: { swaggerFile: GIT_SWAGGER_FILE } });
    await server.register(jobsPlugin);

    server.app.missingOperations = [];
    if (config.services.includes('git')) {
        await server.register({ plugin: gitPlugin, options: { swaggerFile: GIT_SWAGGER_FILE } });
    }

    if (config.services.includes('deploy')) {
        await server.register({ plugin: deployPlugin, options: { specsDir: DEPLOY_SPECS_DIR, webDistDir: WEB_DIST_DIR } });
    } else {
        // The health check belongs to the process, whichever services it hosts.
        server.route({ method: 'GET', path: '/api/health', handler: () => ({ status: 'ok' }) });
    }

    const missing = server.app.missingOperations;
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
