/** Flows: the ones authentik's default blueprints create, and `/flows/instances/`. Providers refer to flows by pk. */
import type { ApiOperations } from './api.ts';
import type { Json } from './http.ts';
import { paginated, searched } from './pagination.ts';
import { type FlowDesignation, type FlowRecord, type Store, uuid } from './store.ts';

export const AUTHENTICATION_FLOW = 'default-authentication-flow';
export const IMPLICIT_CONSENT_FLOW = 'default-provider-authorization-implicit-consent';
export const EXPLICIT_CONSENT_FLOW = 'default-provider-authorization-explicit-consent';
export const PROVIDER_INVALIDATION_FLOW = 'default-provider-invalidation-flow';

const DEFAULT_FLOWS: Array<Omit<FlowRecord, 'pk'>> = [
    {
        slug: AUTHENTICATION_FLOW,
        name: 'Welcome to authentik!',
        title: 'Welcome to authentik!',
        designation: 'authentication',
        authentication: 'none',
    },
    {
        slug: 'default-invalidation-flow',
        name: 'Logout',
        title: 'Default Invalidation Flow',
        designation: 'invalidation',
        authentication: 'none',
    },
    {
        slug: IMPLICIT_CONSENT_FLOW,
        name: 'Authorize Application',
        title: 'Redirecting to %(app)s',
        designation: 'authorization',
        authentication: 'require_authenticated',
    },
    {
        slug: EXPLICIT_CONSENT_FLOW,
        name: 'Authorize Application',
        title: 'Redirecting to %(app)s',
        designation: 'authorization',
        authentication: 'require_authenticated',
    },
    {
        slug: PROVIDER_INVALIDATION_FLOW,
        name: 'Logged out of application',
        title: "You've logged out of %(app)s.",
        designation: 'invalidation',
        authentication: 'none',
    },
];

export function seedFlows(store: Store): void {
    store.flows.push(...DEFAULT_FLOWS.map((flow) => ({ pk: uuid(), ...flow })));
}

export function findFlow(store: Store, pk: unknown): FlowRecord | undefined {
    return store.flows.find((flow) => flow.pk === pk);
}

export function flowBySlug(store: Store, slug: string): FlowRecord | undefined {
    return store.flows.find((flow) => flow.slug === slug);
}

export function showFlow(flow: FlowRecord): Json {
    return {
        ...flow,
        policybindingmodel_ptr_id: flow.pk,
        background: '',
        background_url: '/static/dist/assets/images/flow_background.jpg',
        background_themed_urls: null,
        stages: [],
        policies: [],
        cache_count: 0,
        policy_engine_mode: 'any',
        compatibility_mode: false,
        export_url: `/api/v3/flows/instances/${flow.slug}/export/`,
        layout: 'stacked',
        denied_action: 'message_continue',
    };
}

export const flowOperations: ApiOperations = {
    flows_instances_list: {
        access: 'objects',
        run({ store, query }) {
            let flows = store.flows.filter(
                (flow) =>
                    (query.designation === undefined || flow.designation === (query.designation as FlowDesignation)) &&
                    (query.slug === undefined || flow.slug === query.slug) &&
                    (query.name === undefined || flow.name === query.name) &&
                    (query.flow_uuid === undefined || flow.pk === query.flow_uuid),
            );
            flows = searched(flows, query.search, (flow) => [flow.name, flow.slug, flow.title]);
            return { status: 200, body: paginated(flows.map(showFlow), query, 'slug') };
        },
    },
};
