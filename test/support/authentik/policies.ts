/**
 * Policy bindings (`/policies/bindings/`) and the policy engine's verdict on an application for a user. The
 * stand-in has no policy objects: a binding names a group or a user. As in authentik, with no enabled binding
 * every authenticated user passes; mode `any` needs one passing binding, `all` every one; `negate` inverts one.
 */
import type { ApiContext, ApiOperations } from './api.ts';
import { invalid, nonFieldError, notFound, unknownPkMessage } from './errors.ts';
import { showPartialGroup, showPartialUser } from './directory.ts';
import type { Json } from './http.ts';
import { paginated, searched } from './pagination.ts';
import { type ApplicationRecord, type BindingRecord, type Store, type UserRecord, uuid } from './store.ts';

export function passesPolicies(store: Store, application: ApplicationRecord, user: UserRecord): boolean {
    if (!user.is_active) {
        return false;
    }

    const bindings = store.bindings.filter((binding) => binding.target === application.pk && binding.enabled);
    if (bindings.length === 0) {
        return true;
    }

    const results = bindings.map((binding) => {
        const group = store.groups.find((candidate) => candidate.pk === binding.group);
        const passed = group ? group.users.includes(user.pk) : binding.user !== null ? binding.user === user.pk : binding.failure_result;
        return binding.negate ? !passed : passed;
    });
    return application.policy_engine_mode === 'all' ? results.every(Boolean) : results.some(Boolean);
}

export function showBinding(store: Store, binding: BindingRecord): Json {
    const group = store.groups.find((candidate) => candidate.pk === binding.group);
    const user = store.users.find((candidate) => candidate.pk === binding.user);
    return {
        ...binding,
        policy_obj: null,
        group_obj: group ? showPartialGroup(group) : null,
        user_obj: user ? showPartialUser(store, user) : null,
        expires: null,
        expiring: false,
    };
}

const isTarget = (store: Store, pk: unknown): boolean =>
    store.applications.some((application) => application.pk === pk) || store.flows.some((flow) => flow.pk === pk);

/** The fields' own checks come first (DRF reports them all), then the serializer's `validate`. */
function checkRequest(store: Store, body: Json): void {
    const errors: Record<string, string[]> = {};
    const unknown = (field: string, exists: boolean) => {
        if (body[field] !== undefined && body[field] !== null && !exists) {
            errors[field] = [unknownPkMessage(body[field])];
        }
    };
    unknown('target', isTarget(store, body.target));
    // The stand-in has no policy objects, so any policy named does not exist.
    unknown('policy', false);
    unknown(
        'group',
        store.groups.some((group) => group.pk === body.group),
    );
    unknown(
        'user',
        store.users.some((user) => user.pk === body.user),
    );
    if (Object.keys(errors).length > 0) {
        throw invalid(errors);
    }

    const set = ['policy', 'group', 'user'].filter((field) => body[field] !== undefined && body[field] !== null).length;
    if (set > 1) throw nonFieldError("Only one of 'policy', 'group' or 'user' can be set.");
    if (set < 1) throw nonFieldError("One of 'policy', 'group' or 'user' must be set.");
}

function binding({ store, params }: ApiContext): BindingRecord {
    const found = store.bindings.find((candidate) => candidate.pk === params.policy_binding_uuid);
    if (!found) throw notFound();
    return found;
}

export const policyOperations: ApiOperations = {
    policies_bindings_list: {
        access: 'objects',
        run({ store, query }) {
            const targets = Array.isArray(query.target_in) && query.target_in.length > 0 ? query.target_in : undefined;
            let bindings = store.bindings.filter(
                (candidate) =>
                    (query.target === undefined || candidate.target === query.target) &&
                    (!targets || targets.includes(candidate.target)) &&
                    (query.policy === undefined || candidate.policy === query.policy) &&
                    (query.policy__isnull === undefined || (candidate.policy === null) === query.policy__isnull) &&
                    (query.enabled === undefined || candidate.enabled === query.enabled) &&
                    (query.order === undefined || candidate.order === query.order) &&
                    (query.timeout === undefined || candidate.timeout === query.timeout),
            );
            bindings = searched(bindings, query.search, (candidate) => [
                store.groups.find((group) => group.pk === candidate.group)?.name,
                store.users.find((user) => user.pk === candidate.user)?.username,
            ]);
            return {
                status: 200,
                body: paginated(
                    bindings.map((candidate) => showBinding(store, candidate)),
                    query,
                    'order',
                ),
            };
        },
    },

    policies_bindings_create: {
        access: 'objects',
        run({ store, body }) {
            checkRequest(store, body);
            const created: BindingRecord = {
                pk: uuid(),
                target: String(body.target),
                order: Number(body.order),
                policy: null,
                group: (body.group as string | null | undefined) ?? null,
                user: (body.user as number | null | undefined) ?? null,
                negate: body.negate === true,
                enabled: body.enabled !== false,
                timeout: typeof body.timeout === 'number' ? body.timeout : 30,
                failure_result: body.failure_result === true,
            };
            store.bindings.push(created);
            return { status: 201, body: showBinding(store, created) };
        },
    },

    policies_bindings_retrieve: {
        access: 'objects',
        run(context) {
            return { status: 200, body: showBinding(context.store, binding(context)) };
        },
    },

    policies_bindings_destroy: {
        access: 'objects',
        run(context) {
            const found = binding(context);
            context.store.bindings.splice(context.store.bindings.indexOf(found), 1);
            return { status: 204 };
        },
    },
};
