import Path from 'node:path';

import Joi from 'joi';

export type ServiceName = 'git' | 'deploy';

export interface Config {
    port: number;
    host: string;
    publicUrl: string;
    dataDir: string;
    /** Bare git repositories, `<root>/<owner>/<name>.git` in lower case, as Gitea lays them out. */
    repositoriesDir: string;
    /** Package files, stored by their SHA-256. */
    packagesDir: string;
    databaseUrl: string;
    services: ServiceName[];
    masterKey: string | undefined;
    logLevel: string;
}

const environmentSchema = Joi.object({
    PORT: Joi.number().integer().min(0).max(65535).default(3000),
    HOST: Joi.string().default('127.0.0.1'),
    PUBLIC_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
    DATA_DIR: Joi.string().default('./data'),
    REPOSITORIES_DIR: Joi.string(),
    PACKAGES_DIR: Joi.string(),
    DATABASE_URL: Joi.string().pattern(/^(sqlite|mysql|mariadb):/, 'sqlite:, mysql: or mariadb: URL'),
    SERVICES: Joi.string()
        .pattern(/^\s*(git|deploy)\s*(,\s*(git|deploy)\s*)?$/, 'git, deploy or git,deploy')
        .default('git,deploy'),
    MASTER_KEY: Joi.string().pattern(/^[0-9a-fA-F]{64}$/, '64 hexadecimal characters (32 bytes)'),
    LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
}).unknown(true);

export class ConfigError extends Error {}

/** Reads the configuration from the environment; throws ConfigError naming every bad variable. */
export function loadConfig(environment: NodeJS.ProcessEnv = process.env): Config {
    const { value, error } = environmentSchema.validate(environment, { abortEarly: false, convert: true });
    if (error) {
        const lines = error.details.map((detail) => `  ${detail.path.join('.')}: ${detail.message}`);
        throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
    }

    const dataDir = Path.resolve(value.DATA_DIR as string);
    const port = value.PORT as number;
    const host = value.HOST as string;
    const services = [...new Set((value.SERVICES as string).split(',').map((name) => name.trim()))] as ServiceName[];
    const publicUrl = ((value.PUBLIC_URL as string | undefined) ?? `http://${urlHost(host)}:${port}`).replace(/\/*$/, '/');

    return {
        port,
        host,
        publicUrl,
        dataDir,
        repositoriesDir: Path.resolve((value.REPOSITORIES_DIR as string | undefined) ?? Path.join(dataDir, 'repositories')),
        packagesDir: Path.resolve((value.PACKAGES_DIR as string | undefined) ?? Path.join(dataDir, 'packages')),
        databaseUrl: (value.DATABASE_URL as string | undefined) ?? `sqlite:${Path.join(dataDir, 'gatehouse.sqlite')}`,
        services,
        masterKey: value.MASTER_KEY as string | undefined,
        logLevel: value.LOG_LEVEL as string,
    };
}

function urlHost(host: string): string {
    if (host === '0.0.0.0' || host === '::') {
        return 'localhost';
    }

    return host.includes(':') ? `[${host}]` : host;
}
