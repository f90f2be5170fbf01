/**
 * Applications: `/core/applications/`, addressed by slug; their pk (the pbm_uuid) is what policy bindings target.
 * The list shows a user only the applications their policies let them open, unless a superuser asks for
 * `superuser_full_list` (as authentik's ApplicationViewSet). Deleting an application deletes its bindings.
 */
import type { ApiContext, ApiOperations } from './api.ts';
import { fieldError, notFound, notUnique, unknownPk } from './errors.ts';
import { isSuperuser } from './directory.ts';
import type { Json } from './http.ts';
import { paginated, searched } from './pagination.ts';
import { passesPolicies } from './policies.ts';
import { findProvider, PROVIDER_KINDS, showProvider } from './providers.ts';
import { type ApplicationRecord, type Store, uuid } from './store.ts';

/** Slugs the OAuth2 endpoints use below /application/o/. */
const RESERVED_SLUGS = ['authorize', 'token', 'device', 'userinfo', 'introspect', 'revoke'];

/** Fresh each time: the records own their arrays. */
const defaults = (): Omit<ApplicationRecord, 'pk' | 'name' | 'slug'> => ({
    provider: null,
    backchannel_providers: [],
    open_in_new_tab: false,
    meta_launch_url: '',
    meta_icon: '',
    meta_description: '',
    meta_publisher: '',
    policy_engine_mode: 'any',
    group: '',
    meta_hide: false,
});

export function applicationBySlug(store: Store, slug: unknown): ApplicationRecord | undefined {
    return store.applications.find((application) => application.slug === slug);
}

function launchUrl(store: Store, application: ApplicationRecord): string | null {
    if (application.meta_launch_url) {
        return application.meta_launch_url;
    }

    const provider = findProvider(store, application.provider);
    return provider ? PROVIDER_KINDS[provider.kind].launchUrl(store, provider) : null;
}

export function showApplication(store: Store, application: ApplicationRecord): Json {
    const provider = findProvider(store, application.provider);
    const backchannel = application.backchannel_providers.map((pk) => findProvider(store, pk)).filter((found) => found !== undefined);
    return {
        ...application,
        pbm_uuid: application.pk,
        provider_obj: provider ? showProvider(store, provider) : null,
        backchannel_providers_obj: backchannel.map((found) => showProvider(store, found)),
        launch_url: launchUrl(store, application),
        meta_icon_url: null,
        meta_icon_themed_urls: null,
    };
}

function checkRequest(store: Store, body: Json, existing?: ApplicationRecord): void {
    if (typeof body.slug === 'string' && RESERVED_SLUGS.includes(body.slug)) {
        throw fieldError('slug', `The slug '${body.slug}' is reserved and cannot be used for applications.`);
    }

    if (body.slug !== undefined && store.applications.some((application) => application !== existing && application.slug === body.slug)) {
        throw notUnique('slug', 'Application');
    }

    if (body.provider !== undefined && body.provider !== null) {
        if (!findProvider(store, body.provider)) throw unknownPk('provider', body.provider);
        if (store.applications.some((application) => application !== existing && application.provider === body.provider)) {
            throw notUnique('provider', 'Application');
        }
    }

    const missing = ((body.backchannel_providers ?? []) as number[]).find((pk) => !findProvider(store, pk));
    if (missing !== undefined) throw unknownPk('backchannel_providers', missing);
}

function application({ store, params }: ApiContext): ApplicationRecord {
    const found = applicationBySlug(store, params.slug);
    if (!found) throw notFound();
    return found;
}

function update(context: ApiContext): { status: number; body: Json } {
    const found = application(context);
    checkRequest(context.store, context.body, found);
    Object.assign(found, context.body);
    return { status: 200, body: showApplication(context.store, found) };
}

/** The applications the list shows the caller (or, for a superuser, `for_user`). */
function listed({ store, caller, query }: ApiContext): ApplicationRecord[] {
    const superuser = isSuperuser(store, caller);
    if (superuser && query.superuser_full_list === true) {
        return store.applications;
    }

    const forUser = superuser && query.for_user !== undefined ? store.users.find((user) => user.pk === query.for_user) : caller;
    if (!forUser) throw fieldError('for_user', 'User not found');
    return store.applications.filter((candidate) => passesPolicies(store, candidate, forUser));
}

export const applicationOperations: ApiOperations = {
    core_applications_list: {
        access: 'user',
        run(context) {
            const { store, query } = context;
            let applications = listed(context).filter(
                (candidate) =>
                    (query.slug === undefined || candidate.slug === query.slug) &&
                    (query.name === undefined || candidate.name === query.name) &&
                    (query.group === undefined || candidate.group === query.group) &&
                    (query.meta_launch_url === undefined || candidate.meta_launch_url === query.meta_launch_url) &&
                    (query.meta_description === undefined || candidate.meta_description === query.meta_description) &&
                    (query.meta_publisher === undefined || candidate.meta_publisher === query.meta_publisher) &&
                    (query.only_with_launch_url !== true || launchUrl(store, candidate) !== null),
            );
            applications = searched(applications, query.search, (candidate) => [
                candidate.name,
                candidate.slug,
                candidate.meta_publisher,
                candidate.meta_description,
                candidate.group,
            ]);
            return {
                status: 200,
                body: paginated(
                    applications.map((candidate) => showApplication(store, candidate)),
                    query,
                    'name',
                ),
            };
        },
    },

    core_applications_create: {
        access: 'objects',
        run({ store, body }) {
            checkRequest(store, body);
            // The schema checked the body's fields and their types; name and slug are required there.
            const created = { ...defaults(), ...body, pk: uuid() } as ApplicationRecord;
            store.applications.push(created);
            return { status: 201, body: showApplication(store, created) };
        },
    },

    core_applications_retrieve: {
        access: 'objects',
        run(context) {
            return { status: 200, body: showApplication(context.store, application(context)) };
        },
    },

    core_applications_update: { access: 'objects', run: update },

    core_applications_partial_update: { access: 'objects', run: update },

    core_applications_destroy: {
        access: 'objects',
        run(context) {
            const { store } = context;
            const found = application(context);
            store.applications.splice(store.applications.indexOf(found), 1);
            for (const binding of store.bindings.filter((candidate) => candidate.target === found.pk)) {
                store.bindings.splice(store.bindings.indexOf(binding), 1);
            }

            return { status: 204 };
        },
    },
};
