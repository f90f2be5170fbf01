import Fs from 'node:fs';
import Path from 'node:path';

import { Browser, signIn } from './browser.ts';
import { createTestServer, type TestServer } from './server.ts';

export interface DeployTestServer {
    context: TestServer;
    baseUrl: string;
    /** Signed in as the first administrator. */
    admin: Browser;
    /** A new user of the role, signed in. */
    signInAs(role: 'viewer' | 'editor' | 'admin'): Promise<Browser>;
}

let counter = 0;

/** A started server whose first administrator is set up and signed in, over real HTTP with cookies and CSRF. */
export async function deployTestServer(environment: Record<string, string> = {}): Promise<DeployTestServer> {
    const context = await createTestServer(environment);
    await context.server.start();
    const baseUrl = `http://127.0.0.1:${context.server.info.port}`;
    const admin = new Browser(baseUrl);
    await admin.get('/api/setup/status');
    const token = Fs.readFileSync(Path.join(context.dataDir, 'setup-token'), 'utf8').trim();
    const adminAccount = { email: 'admin@example.com', name: 'Admin', password: 'admin-password-1' };
    await admin.post('/api/setup', { token, ...adminAccount });
    await admin.post('/api/auth/login', { email: adminAccount.email, password: adminAccount.password });

    const signInAs = async (role: 'viewer' | 'editor' | 'admin') => {
        counter += 1;
        const email = `${role}${counter}@example.com`;
        const created = await admin.post('/api/admin/users', { email, name: `${role} ${counter}`, password: 'user-password-1', role });
        if (created.status !== 201) {
            throw new Error(`could not create a ${role}: ${created.status} ${created.text}`);
        }

        return await signIn(baseUrl, email, 'user-password-1');
    };

    return { context, baseUrl, admin, signInAs };
}
