import { whereContains } from '../../../../lib/database.ts';
import type { Paging } from '../../../../lib/paging.ts';
import { cell, rowReader } from '../../../../lib/row-reader.ts';
import { defineService } from '../../../../lib/services.ts';
import { USER_TYPE } from './user-service.ts';
import { Service } from '../../../../lib/service.ts';

export interface ApiEmail {
    email: string;
    verified: boolean;
    primary: boolean;
    user_id: number;
    username: string;
}

const toApiEmail = rowReader<ApiEmail>({
    email: ['email', cell.string],
    verified: ['is_activated', cell.boolean],
    primary: ['is_primary', cell.boolean],
    user_id: ['uid', cell.number],
    username: ['name', cell.string],
});

/** Individual users' e-mail addresses, as Gitea's admin e-mail list shows them. */
export class EmailService extends Service {
    /** `text` matches the address, the user's name and full name; empty lists every address. Ordered by address. */
    async search(text: string, paging: Paging): Promise<{ rows: ApiEmail[]; total: number }> {
        const query = this.server.app
            .knex('email_addresses')
            .join('users', 'users.id', 'email_addresses.uid')
            .where('users.type', USER_TYPE.individual);
        if (text !== '') {
            whereContains(query, ['email_addresses.lower_email', 'users.lower_name', 'users.full_name'], text);
        }

        const total = Number((await query.clone().count({ count: '*' }).first())?.count ?? 0);
        const rows = await query
            .orderBy('email_addresses.lower_email', 'asc')
            .orderBy('email_addresses.is_primary', 'desc')
            .orderBy('email_addresses.id', 'asc')
            .limit(paging.limit)
            .offset(paging.offset)
            .select(
                'email_addresses.email',
                'email_addresses.is_activated',
                'email_addresses.is_primary',
                'email_addresses.uid',
                'users.name',
            );
        return {
            rows: rows.map(toApiEmail),
            total,
        };
    }
}

export const emails = defineService<EmailService>('emails', (owner) => new EmailService(owner));
