/** The shapes of the deploy manager's answers this page and the new-app wizard read (README, specs/deploy/*.yaml). */

export type FindingLevel = 'error' | 'risk' | 'warning' | 'info';

export interface Finding {
    path: string;
    level: FindingLevel;
    message: string;
    service?: string;
    field?: string;
    fix?: string;
    /** nginx's own messages carry the site's line. */
    line?: number;
    /** A compose variable without a value: the secrets are where it is fixed. */
    variable?: string;
}

export interface FileCheck {
    ok: boolean;
    errors: Finding[];
    lint: Finding[];
}

export type EvidenceLevel = 'tested' | 'documented' | 'found';

export interface EvidenceSource {
    what: string;
    url?: string;
}

export type OptionSection = 'recommended' | 'evidence' | 'last-resort' | 'more' | 'own';

export type MethodNeed = 'adminUser' | 'samlAcs' | 'sharedUser' | 'sharedPassword';

/** What applying the app's recipe would change, shown for review before it is chosen. */
export interface RecipeChanges {
    recipe: string;
    title: string;
    /** Where the recipe comes from: a recipe file, or saved from which app, by whom and when. */
    from: string;
    login?: { adapter: string; path?: string };
    samlAcs?: string;
    redirect?: string;
    env: Record<string, string>;
    remove: string[];
    steps: string[];
    init: string[];
    /** Why the recipe cannot be applied (paths that fail the checks); empty when it can. */
    problems: string[];
}

export interface MethodOption {
    method: string;
    title: string;
    singleSignOn: boolean;
    needs: MethodNeed[];
    section: OptionSection;
    level: EvidenceLevel | null;
    sources: EvidenceSource[];
    paidOnly: boolean;
    recommended: boolean;
    applies?: RecipeChanges;
}

export interface SignInCheck {
    ok: boolean;
    text: string;
    at: string;
}

export interface Identity {
    account: string;
    method: string;
    recipe: { id: string; title: string; level: string } | null;
    adminUser: string | null;
    options: MethodOption[];
    information: Array<{ method: string; sources: EvidenceSource[] }>;
    values: Record<string, string>;
    check: SignInCheck | null;
}

export interface AccessGroup {
    pk: string;
    name: string;
}

export interface AppAccess {
    groups: AccessGroup[];
    mode: 'public' | 'signed-in' | 'groups';
    applied?: boolean;
}

export interface Draft {
    title?: string;
    compose: string;
    nginx: string;
    composeEditor?: 'model' | 'text';
    nginxEditor?: 'model' | 'text';
    auth?: { groups?: AccessGroup[]; access?: AppAccess['mode'] };
    account?: string;
    adminUser?: string;
    samlAcs?: string;
    samlAudience?: string;
    sharedUser?: string;
    login?: { adapter: string; path?: string };
    step?: string;
    /** Masked for viewers by the API. */
    secrets: Record<string, string>;
    hasSharedPassword: boolean;
}

export type AppState = 'draft' | 'running' | 'stopped' | 'failed' | string;

export interface App {
    name: string;
    title: string;
    templateId: string | null;
    image: string | null;
    tag: string;
    domain: string;
    url: string;
    state: AppState;
    hostPort: number;
    createdAt: string;
    updatedAt: string;
    draft: Draft;
    identity?: Identity;
    access?: AppAccess;
}

export interface AvailabilityCheck {
    ok: boolean | null;
    reason: string;
}

export interface Availability {
    name: string;
    domain: string;
    available: boolean;
    checks: Record<'name' | 'dns' | 'folder' | 'site' | 'container' | 'certificate', AvailabilityCheck>;
}

export type PlanAction = 'create' | 'update' | 'unchanged' | 'obtain' | 'keep' | 'not managed';

export interface AppFile {
    path: string;
    kind: 'compose' | 'secrets' | 'nginx' | 'other';
    content: string;
    masked: boolean;
}

export interface Preview {
    plan: {
        files: Array<{ path: string; kind: string; action: PlanAction }>;
        containers: Array<{ service: string; container: string; image: string | null; action: PlanAction }>;
        networks: Array<{ name: string; action: PlanAction }>;
        volumes: Array<{ name: string; action: PlanAction }>;
        site: { path: string; action: PlanAction };
        certificate: { domain: string; action: PlanAction };
        dns: { record: string; action: PlanAction };
        /** What the deploy makes or updates at the identity provider; empty when none is connected. */
        access: Array<{ name: string; detail: string; action: PlanAction }>;
    };
    files: AppFile[];
    lint: Finding[];
    availability: Availability;
}

export type RunState = 'running' | 'succeeded' | 'failed' | 'rolled back' | 'interrupted';

export interface Run {
    id: number;
    app: string;
    kind: string;
    state: RunState;
    error: string | null;
    startedAt: string;
    endedAt: string | null;
}

export interface RunLine {
    seq: number;
    step: string;
    level: 'info' | 'warning' | 'error';
    text: string;
}

export interface ContainerStatus {
    service: string;
    name: string;
    id: string;
    state: string;
    health: 'healthy' | 'unhealthy' | 'starting' | null;
    restarts: number;
    exitCode: number | null;
    image: string;
    startedAt: string | null;
    ports: Array<{ hostIp: string; hostPort: number; containerPort: number; protocol: string }>;
}

export interface Probe {
    url: string;
    host: string;
    statusCode: number | null;
    location: string | null;
    ms: number;
    error: string | null;
    /** The app serves (behind forward auth, its upstreams answered too). */
    ok: boolean;
}

/** A line of the live logs (`GET /api/apps/{name}/logs/stream`). */
export interface FollowedLine {
    service: string;
    container: string;
    stream: 'stdout' | 'stderr';
    time: string | null;
    text: string;
}

export interface CertificateInfo {
    issuer: string;
    subject: string;
    names: string[];
    notBefore: string;
    notAfter: string;
    daysLeft: number;
}

export interface AppStatus {
    app: string;
    domain: string;
    state: string;
    containers: ContainerStatus[];
    probe: { http: Probe; https: Probe | null };
    certificate: CertificateInfo | null;
    certificateError: string | null;
}

export interface DirectoryUser {
    pk: string;
    username: string;
    name: string;
    email: string;
    active: boolean;
}

export interface DirectoryGroup {
    pk: string;
    name: string;
    members: Array<{ pk: string; username: string; name: string; email: string }>;
    apps: string[];
}

export interface Directory {
    groups: DirectoryGroup[];
    suggestions: Array<{ pk: string; name: string; reason: string }>;
}

/** The accepted answer of every route that starts a run. */
export interface RunStarted {
    runId: number;
}
