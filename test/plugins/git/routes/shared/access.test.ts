import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Request } from '@hapi/hapi';

import { gitOperations, readSwagger } from '../../../../../lib/spec/git-loader.ts';
import { accessCheck, type OperationAccess, pathOrg, pathUser } from '../../../../../plugins/git/routes/shared/access.ts';
import { GIT_SWAGGER_FILE } from '../../../../../server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const PUBLIC: OperationAccess = { scopes: [], signIn: false, siteAdmin: false };

describe('git access declarations', () => {
    it('declares how every path that names an organisation or a user loads it, and no other', () => {
        for (const operation of gitOperations(readSwagger(GIT_SWAGGER_FILE))) {
            const access = operation['x-gatehouse-access'] as OperationAccess;
            expect(access.org !== undefined, `${operation.operationId} org`).to.equal(operation.path.includes('{org}'));
            expect(access.user !== undefined, `${operation.operationId} user`).to.equal(operation.path.includes('{username}'));
        }
    });

    it('stops start-up on a declaration it does not know', () => {
        expect(() => accessCheck({ ...PUBLIC, org: 'boss' } as unknown as OperationAccess)).to.throw(
            'x-gatehouse-access: org must be one of visible, member, owner, not boss',
        );
        expect(() => accessCheck({ ...PUBLIC, user: true } as unknown as OperationAccess)).to.throw(
            'x-gatehouse-access: user must be one of individual, any, not true',
        );
        expect(() => accessCheck({ ...PUBLIC, org: 'owner', user: 'any' })).to.not.throw();
    });

    it('refuses a handler that reads what its operation does not declare', () => {
        const request = { plugins: {}, route: { settings: { id: 'someOperation' } } } as unknown as Request;
        expect(() => pathOrg(request)).to.throw("someOperation reads the path's organisation but declares no org access");
        expect(() => pathUser(request)).to.throw("someOperation reads the path's user but declares no user access");
    });
});
