/** GET /api/dashboard and GET /api/system, as far as the dashboard reads them. */
export interface RecentRun {
    id: number;
    app: string;
    kind: string;
    state: string;
    startedAt: string;
    endedAt: string | null;
}

export interface Dashboard {
    apps: { total: number; byState: Record<string, number> };
    users: { total: number; disabled: number };
    recentRuns: RecentRun[];
    runsInProgress: number;
}

interface Checked {
    configured?: boolean;
    reachable?: boolean | null;
    error?: string | null;
}

/** nginx as GET /api/system reports it: its configuration test, and whether it serves the apps' sites. */
export interface NginxStatus {
    binary: string;
    confPath: string | null;
    configTest: { ok: boolean; output: string; checkedAt: string };
    sitesDir: string;
    includesSites: boolean;
    running: boolean;
}

export interface SystemInfo {
    tools: Record<string, { found: boolean; version: string | null }>;
    integrations: {
        docker: { reachable: boolean; version: string | null; error: string | null };
        nginx: NginxStatus;
        acme: Checked & { directoryUrl: string | null };
        registry: Checked & { url: string | null };
        dns: { configured: boolean; provider: string | null; server: string | null; zone: string | null };
        identityProvider: { configured: boolean; kind: string | null; url: string | null; health: { status: string; message: string } };
        oidcSignIn: { configured: boolean; issuer: string | null };
    };
    conventions: { baseDomain: string; publicUrl: string };
}
