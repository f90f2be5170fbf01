/**
 * `gatehouse admin user <command>`: the first administrator and access tokens, modelled on Gitea's
 * `gitea admin user` commands. Uses the same DATA_DIR / DATABASE_URL as the server.
 */
import { parseArgs } from 'node:util';

import Hapi from '@hapi/hapi';

import '../lib/context.ts';
import { ConfigError, loadConfig } from '../lib/config.ts';
import { createKnex, migrate, toRfc3339 } from '../lib/database.ts';
import { ServiceError } from '../lib/errors.ts';
import { tokens } from '../plugins/git/domain/identity/token-service.ts';
import { USER_TYPE, users } from '../plugins/git/domain/identity/user-service.ts';

const USAGE = `Usage:
  gatehouse admin user create --username NAME --email EMAIL (--password PASSWORD | --random-password)
                              [--admin] [--must-change-password[=false]] [--full-name NAME]
  gatehouse admin user list [--admin]
  gatehouse admin user change-password --username NAME --password PASSWORD [--must-change-password[=false]]
  gatehouse admin user generate-access-token --username NAME [--token-name NAME] [--scopes all|read:admin,...] [--raw]

Environment: DATA_DIR, DATABASE_URL (as for the server).`;

type Options = Record<string, string | boolean | undefined>;

class UsageError extends Error {}

function required(options: Options, name: string): string {
    const value = options[name];
    if (typeof value !== 'string' || value === '') {
        throw new UsageError(`--${name} is required`);
    }

    return value;
}

/** `--flag`, `--flag=true` and `--flag=false` all work, as in Gitea's CLI. */
function flag(options: Options, name: string): boolean | undefined {
    const value = options[name];
    if (value === undefined) {
        return undefined;
    }

    return value === true || value === 'true';
}

async function withServer<T>(work: (server: Hapi.Server) => Promise<T>): Promise<T> {
    const config = loadConfig();
    const knex = createKnex(config.databaseUrl);
    try {
        await migrate(knex);
        const server = Hapi.server();
        server.app.config = config;
        server.app.knex = knex;
        return await work(server);
    } finally {
        await knex.destroy();
    }
}

async function createUser(options: Options): Promise<void> {
    const random = flag(options, 'random-password') === true;
    const password = random ? Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString('base64url') : required(options, 'password');
    await withServer(async (server) => {
        const isFirst = !(await server.app.knex('users').where({ type: USER_TYPE.individual }).first('id'));
        const user = await users(server).create({
            username: required(options, 'username'),
            email: required(options, 'email'),
            password,
            full_name: typeof options['full-name'] === 'string' ? options['full-name'] : undefined,
            is_admin: flag(options, 'admin') === true,
            // Gitea lets the very first user keep the password it was given.
            must_change_password: flag(options, 'must-change-password') ?? !isFirst,
        });
        console.log(`New user '${user.name}' has been successfully created!`);
        if (random) {
            console.log(`generated random password is '${password}'`);
        }
    });
}

async function listUsers(options: Options): Promise<void> {
    await withServer(async (server) => {
        const query = server.app.knex('users').where({ type: USER_TYPE.individual }).orderBy('id');
        if (flag(options, 'admin')) {
            query.where({ is_admin: true });
        }

        console.log(['ID', 'Username', 'Email', 'IsActive', 'IsAdmin', 'Created'].join('\t'));
        for (const row of await query) {
            console.log(
                [row.id, row.name, row.email, Boolean(row.is_active), Boolean(row.is_admin), toRfc3339(Number(row.created_at))].join('\t'),
            );
        }
    });
}

async function changePassword(options: Options): Promise<void> {
    await withServer(async (server) => {
        const service = users(server);
        const user = await service.resolve(required(options, 'username'), USER_TYPE.individual);
        await service.edit(user, {
            password: required(options, 'password'),
            must_change_password: flag(options, 'must-change-password') ?? true,
        });
        console.log(`${user.name}'s password has been successfully updated!`);
    });
}

async function generateToken(options: Options): Promise<void> {
    await withServer(async (server) => {
        const user = await users(server).resolve(required(options, 'username'), USER_TYPE.individual);
        const name = typeof options['token-name'] === 'string' ? options['token-name'] : 'gitea-admin';
        const scopes = typeof options.scopes === 'string' ? options.scopes.split(',') : ['all'];
        const { token } = await tokens(server).create(user, name, scopes);
        console.log(flag(options, 'raw') ? token : `Access token was successfully created: ${token}`);
    });
}

const COMMANDS: Record<string, (options: Options) => Promise<void>> = {
    create: createUser,
    list: listUsers,
    'change-password': changePassword,
    'generate-access-token': generateToken,
};

async function main(argv: string[]): Promise<number> {
    const { values, positionals } = parseArgs({
        args: argv,
        allowPositionals: true,
        // Not strict, so that boolean flags also take Gitea's `--flag=false` form.
        strict: false,
        options: {
            username: { type: 'string' },
            password: { type: 'string' },
            email: { type: 'string' },
            'full-name': { type: 'string' },
            'token-name': { type: 'string' },
            scopes: { type: 'string' },
            admin: { type: 'boolean' },
            'must-change-password': { type: 'boolean' },
            'random-password': { type: 'boolean' },
            raw: { type: 'boolean' },
        },
    });
    const [group, subject, command = ''] = positionals;
    const run = COMMANDS[command];
    if (group !== 'admin' || subject !== 'user' || !run) {
        console.error(USAGE);
        return 2;
    }

    await run(values);
    return 0;
}

try {
    process.exitCode = await main(process.argv.slice(2));
} catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) {
        console.error(`${error.message}\n\n${USAGE}`);
        process.exitCode = 2;
    } else if (error instanceof ServiceError) {
        console.error(`Command error: ${error.message}`);
        process.exitCode = 1;
    } else {
        throw error;
    }
}
