import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Hapi from '@hapi/hapi';
import * as Lab from '@hapi/lab';

import { registerErrorShapes } from '../../../lib/errors.ts';
import { readDeploySpec, readDeploySpecs, registerDeployApi } from '../../../lib/spec/deploy-loader.ts';
import { ROOT_DIR } from '../../../server.ts';
import { temporaryDirectory } from '../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, beforeEach, afterEach } = lab;
const { expect } = Code;

const SPECS_DIR = Path.join(ROOT_DIR, 'specs', 'deploy');

/** Who may call each route of the real specs: a change here is a change of who may do what. */
const ROLES_OF_ROUTES = {
    public: [
        'auth.login',
        'auth.logout',
        'auth.me',
        'auth.submitMfa',
        'autologin.autoLogin',
        'health.getHealth',
        'oidc.completeSignIn',
        'oidc.startSignIn',
        'setup.completeSetup',
        'setup.getStatus',
    ],
    'signed-in': [
        'account.beginTotp',
        'account.changePassword',
        'account.disableTotp',
        'account.enableTotp',
        'account.endSession',
        'account.listSessions',
        'account.regenerateRecoveryCodes',
        'account.updateProfile',
        'apps.getApp',
        'apps.listApps',
        'apps.listFiles',
        'hub.inspectImage',
        'hub.listHubTags',
        'hub.searchHub',
        'notifications.getNotificationSettings',
        'notifications.updateNotificationSettings',
        'overview.getDashboard',
        'overview.getSystem',
        'recipes.exportRecipe',
        'recipes.listCatalog',
        'recipes.listRecipes',
        'runs.getAppRun',
        'runs.getRun',
        'runs.listRuns',
        'runs.streamAppRun',
        'runs.streamRun',
        'stats.getTopApps',
        'stats.streamAppStats',
        'status.getAppLogs',
        'status.getAppStatus',
        'status.streamAppLogs',
    ],
    editor: [
        'access.listAccessGroups',
        'access.listDirectoryUsers',
        'access.updateAppAccess',
        'apps.checkName',
        'apps.createApp',
        'apps.previewApp',
        'apps.saveDraft',
        'backups.createBackup',
        'backups.deleteBackup',
        'backups.restoreBackup',
        'backups.setBackupSchedule',
        'compose.parseComposeText',
        'compose.renderComposeSpec',
        'compose.validateComposeFile',
        'lifecycle.actOnApp',
        'lifecycle.changeSignIn',
        'lifecycle.deployApp',
        'lifecycle.updateCompose',
        'lifecycle.updateNginx',
        'nginx.parseNginx',
        'nginx.renderNginx',
        'nginx.validateNginx',
        'recipes.detectSignIn',
        'recipes.listAutoLoginAdapters',
        'recipes.saveAppRecipe',
        'secrets.generateSecret',
        'updates.setAutomaticUpdates',
        'updates.updateApp',
    ],
    admin: [
        'audit.listAudit',
        'idp.bootstrapIdentityProvider',
        'idp.disconnectIdentityProvider',
        'idp.discoverIdentityProvider',
        'idp.getIdentityProvider',
        'idp.updateIdentityProvider',
        'lifecycle.deleteApp',
        'notifications.listNotificationDeliveries',
        'oidc.getSettings',
        'oidc.testSettings',
        'oidc.updateSettings',
        'terminal.getTerminal',
        'terminal.openTerminal',
        'users.createUser',
        'users.deleteUser',
        'users.listUsers',
        'users.updateUser',
    ],
    viewer: ['backups.getBackupSchedule', 'backups.listBackups', 'updates.listKnownUpdates', 'updates.listUpdates'],
};

function specText(groupRole: string | undefined, routes: Array<{ path: string; handler: string; role?: string }>): string {
    const lines = ['group: things', 'prefix: /api', ...(groupRole ? [`role: ${groupRole}`] : []), 'routes:'];
    for (const { path, handler, role } of routes) {
        lines.push('  - method: GET', `    path: ${path}`, `    handler: ${handler}`, ...(role ? [`    role: ${role}`] : []));
    }

    return `${lines.join('\n')}\n`;
}

describe('the deploy API loader: roles', () => {
    let folder: string;
    let specFile: string;

    beforeEach(() => {
        folder = temporaryDirectory();
        Fs.mkdirSync(Path.join(folder, 'specs'));
        specFile = Path.join(folder, 'specs', 'things.yaml');
    });

    afterEach(() => {
        Fs.rmSync(folder, { recursive: true, force: true });
    });

    it("gives the routes that name no role the group's role, and keeps a route's own", () => {
        Fs.writeFileSync(
            specFile,
            specText('admin', [
                { path: '/things', handler: 'listThings' },
                { path: '/things/open', handler: 'openThing', role: 'public' },
            ]),
        );
        const spec = readDeploySpec(specFile);
        expect(spec.routes.map((route) => route.role)).to.equal(['admin', 'public']);
    });

    it('refuses a route without a role in a group without one, naming the file and the route', () => {
        Fs.writeFileSync(specFile, specText(undefined, [{ path: '/things', handler: 'listThings' }]));
        expect(() => readDeploySpec(specFile)).to.throw(/things\.yaml: "routes\[0\]\.role" is required/);
    });

    it('refuses a group role that is not a role', () => {
        Fs.writeFileSync(specFile, specText('owner', [{ path: '/things', handler: 'listThings' }]));
        expect(() => readDeploySpec(specFile)).to.throw(/things\.yaml: "role" must be one of/);
    });

    it("enforces the group's role and a route's own", async () => {
        Fs.writeFileSync(
            specFile,
            specText('admin', [
                { path: '/things', handler: 'listThings' },
                { path: '/things/open', handler: 'openThing', role: 'public' },
            ]),
        );
        const handlers = Path.join(folder, 'routes', 'things');
        Fs.mkdirSync(handlers, { recursive: true });
        Fs.writeFileSync(
            Path.join(handlers, 'handlers.ts'),
            'export const listThings = () => ({ things: [] });\nexport const openThing = () => ({ open: true });\n',
        );
        const server = Hapi.server();
        registerErrorShapes(server, 'http://127.0.0.1:3000/api/swagger');
        expect(
            await registerDeployApi(server, { specsDir: Path.join(folder, 'specs'), handlersRoot: Path.join(folder, 'routes') }),
        ).to.equal([]);
        const closed = await server.inject('/api/things');
        expect(closed.statusCode).to.equal(401);
        expect(closed.result).to.equal({ error: 'not signed in' });
        const open = await server.inject('/api/things/open');
        expect(open.statusCode).to.equal(200);
        expect(open.result).to.equal({ open: true });
    });

    it('gives each route of the real specs the role it has always had', () => {
        const roles: Record<string, string[]> = {};
        for (const spec of readDeploySpecs(SPECS_DIR)) {
            for (const route of spec.routes) {
                (roles[route.role] ??= []).push(`${spec.group}.${route.handler}`);
            }
        }

        for (const list of Object.values(roles)) {
            list.sort();
        }

        expect(roles).to.equal(ROLES_OF_ROUTES);
    });
});
