/**
 * API tokens: `/core/tokens/`, and the Bearer authentication every API request goes through. As in authentik, only
 * tokens of intent `api` authenticate; an API token expires after the default token duration unless a superuser
 * created it with `expiring: false`; a user who is not a superuser sees and makes only their own tokens.
 */
import type { ApiContext, ApiOperations } from './api.ts';
import { invalid, notFound, notUnique, unknownPk } from './errors.ts';
import { isSuperuser, showUser } from './directory.ts';
import type { Json } from './http.ts';
import { paginated, searched } from './pagination.ts';
import { generateId, type Store, timestamp, type TokenIntent, type TokenRecord, type UserRecord, uuid } from './store.ts';

export const BOOTSTRAP_TOKEN_IDENTIFIER = 'authentik-bootstrap-token';
const DEFAULT_TOKEN_DURATION_MS = 24 * 60 * 60 * 1000;

export interface NewToken {
    identifier: string;
    user: UserRecord;
    intent?: TokenIntent;
    expiring?: boolean;
    description?: string;
    managed?: string | null;
}

export function createToken(store: Store, input: NewToken): TokenRecord {
    if (store.tokens.some((token) => token.identifier === input.identifier)) {
        throw new Error(`the authentik stand-in already has a token ${input.identifier}`);
    }

    const token: TokenRecord = {
        pk: uuid(),
        identifier: input.identifier,
        key: generateId(60),
        intent: input.intent ?? 'api',
        user: input.user.pk,
        description: input.description ?? '',
        expires: timestamp(DEFAULT_TOKEN_DURATION_MS),
        expiring: input.expiring ?? true,
        managed: input.managed ?? null,
    };
    store.tokens.push(token);
    return token;
}

function isExpired(token: TokenRecord): boolean {
    return token.expiring && token.expires !== null && Date.parse(token.expires) <= Date.now();
}

/** The user a `Bearer` header authenticates: 'missing' without credentials, 'invalid' for an unknown or expired token. */
export function authenticate(store: Store, authorization: string | undefined): UserRecord | 'missing' | 'invalid' {
    const credentials = (authorization ?? '').trim();
    const [scheme, key = ''] = credentials.split(/\s+/, 2);
    if (credentials === '' || scheme?.toLowerCase() !== 'bearer') {
        return 'missing';
    }

    const token = store.tokens.find((candidate) => candidate.key === key && candidate.intent === 'api' && !isExpired(candidate));
    const user = token && store.users.find((candidate) => candidate.pk === token.user);
    return user?.is_active ? user : 'invalid';
}

export function showToken(store: Store, token: TokenRecord): Json {
    const { key: _key, ...fields } = token;
    const user = store.users.find((candidate) => candidate.pk === token.user);
    return { ...fields, user_obj: user ? showUser(store, user) : null };
}

function visibleTokens({ store, caller }: ApiContext): TokenRecord[] {
    return isSuperuser(store, caller) ? store.tokens : store.tokens.filter((token) => token.user === caller.pk);
}

function visibleToken(context: ApiContext): TokenRecord {
    const token = visibleTokens(context).find((candidate) => candidate.identifier === context.params.identifier);
    if (!token) throw notFound();
    return token;
}

function create(context: ApiContext): TokenRecord {
    const { store, caller, body } = context;
    const intent = (body.intent ?? 'api') as TokenIntent;
    if (intent !== 'api' && intent !== 'app_password') {
        throw invalid({ intent: [`Invalid intent ${intent}`] });
    }

    if (store.tokens.some((token) => token.identifier === body.identifier)) {
        throw notUnique('identifier', 'Token');
    }

    const superuser = isSuperuser(store, caller);
    const user = superuser && body.user !== undefined ? store.users.find((candidate) => candidate.pk === body.user) : caller;
    if (!user) throw unknownPk('user', body.user);
    // Only a superuser decides expiring; anyone else's tokens always expire.
    const expiring = superuser ? body.expiring !== false : true;
    return createToken(store, {
        identifier: String(body.identifier),
        user,
        intent,
        expiring,
        description: typeof body.description === 'string' ? body.description : '',
        managed: typeof body.managed === 'string' ? body.managed : null,
    });
}

export const tokenOperations: ApiOperations = {
    core_tokens_list: {
        access: 'user',
        run(context) {
            const { store, query } = context;
            let tokens = visibleTokens(context).filter(
                (token) =>
                    (query.identifier === undefined || token.identifier === query.identifier) &&
                    (query.intent === undefined || token.intent === query.intent) &&
                    (query.managed === undefined || token.managed === query.managed) &&
                    (query.description === undefined || token.description === query.description) &&
                    (query.expiring === undefined || token.expiring === query.expiring) &&
                    (query.user__username === undefined ||
                        store.users.find((user) => user.pk === token.user)?.username === query.user__username),
            );
            tokens = searched(tokens, query.search, (token) => [token.identifier, token.intent, token.description]);
            return {
                status: 200,
                body: paginated(
                    tokens.map((token) => showToken(store, token)),
                    query,
                    'identifier',
                ),
            };
        },
    },

    core_tokens_create: {
        access: 'user',
        run(context) {
            return { status: 201, body: showToken(context.store, create(context)) };
        },
    },

    core_tokens_retrieve: {
        access: 'user',
        run(context) {
            return { status: 200, body: showToken(context.store, visibleToken(context)) };
        },
    },

    core_tokens_view_key_retrieve: {
        access: 'user',
        run(context) {
            return { status: 200, body: { key: visibleToken(context).key } };
        },
    },

    core_tokens_destroy: {
        access: 'user',
        run(context) {
            const token = visibleToken(context);
            context.store.tokens.splice(context.store.tokens.indexOf(token), 1);
            return { status: 204 };
        },
    },
};
