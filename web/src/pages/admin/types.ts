/** The shapes the admin pages read, as specs/deploy/{users,audit,oidc,idp,overview}.yaml and the README describe them. */
import type { Role } from '../../api.ts';
import type { NginxStatus } from '../dashboard/types.ts';

export interface AdminUser {
    id: number;
    email: string;
    name: string;
    role: Role;
    disabled: boolean;
    totpEnabled: boolean;
    createdAt: number;
    lastLoginAt: number;
}

export interface AuditEntry {
    id: number;
    at: string;
    actor: { id: number; email: string } | null;
    action: string;
    target: string;
    outcome: 'success' | 'failure';
    clientAddress: string;
    details: Record<string, unknown>;
}

export interface AuditPage {
    entries: AuditEntry[];
    total: number;
}

export interface OidcSettings {
    enabled: boolean;
    issuer: string;
    clientId: string;
    hasClientSecret: boolean;
    redirectUri: string;
}

export interface OidcTestReport {
    ok: boolean;
    issuer: string;
    authorizationEndpoint?: string;
    error?: string;
}

export interface NamedRef {
    pk: string;
    name: string;
}

export interface FlowRef {
    pk: string;
    slug: string;
    name?: string;
}

export interface IdpHealth {
    status: string;
    message: string;
    checkedAt: string;
}

export interface IdpConnection {
    connected: boolean;
    kind: string;
    url: string | null;
    outpostUrl: string | null;
    outpost: NamedRef | null;
    authorizationFlow: FlowRef | null;
    invalidationFlow: FlowRef | null;
    signingKey: NamedRef | null;
    tokenSet: boolean;
    version: string | null;
    health: IdpHealth;
    /** The identity-provider kinds the server has (plugins/idp/providers/<kind>.ts and IDP_KINDS_DIRS). */
    kinds: Array<{ name: string; title: string }>;
    /** Only in the answer of a disconnect. */
    tokenRevoked?: boolean;
    note?: string | null;
}

export interface IdpDiscovery {
    version: string;
    outposts: Array<{ pk: string; name: string; type: string; managed: string | null }>;
    flows: { authorization: FlowRef[]; invalidation: FlowRef[] };
    signingKeys: NamedRef[];
}

export interface ToolVersion {
    found: boolean;
    version: string | null;
}

export interface SystemReport {
    tools: Record<string, ToolVersion>;
    integrations: {
        docker: { reachable: boolean; version: string | null; apiVersion: string | null; error: string | null };
        nginx: NginxStatus;
        acme: {
            configured: boolean;
            directoryUrl: string | null;
            email: string | null;
            renewDays: number;
            reachable: boolean | null;
            error: string | null;
        };
        registry: {
            configured: boolean;
            url: string | null;
            username: string | null;
            passwordSet: boolean;
            reachable: boolean | null;
            error: string | null;
        };
        dns: {
            configured: boolean;
            provider: string | null;
            server: string | null;
            zone: string | null;
            tsigKeyName: string | null;
            tsigSecretSet: boolean;
        };
        identityProvider: { configured: boolean; kind: string | null; url: string | null; health: IdpHealth };
        oidcSignIn: { configured: boolean; issuer: string | null };
    };
    conventions: Record<string, string | number | string[] | null>;
}
