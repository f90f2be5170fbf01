import { defineService } from '../../../../lib/services.ts';
import { VISIBILITIES } from '../identity/names.ts';
import { Service } from '../../../../lib/service.ts';

/**
 * Which mentioned names a rendered document links. Rendering through the API, Gitea links a mention to an existing
 * user of any kind (organisations too) whose visibility is public (services/markup/renderhelper.go).
 */
export class MentionService extends Service {
    /** Of the lower-case names (the renderer bounds how many), those of public users and organisations, in one query. */
    async mentionable(names: string[]): Promise<Set<string>> {
        if (names.length === 0) {
            return new Set();
        }

        const rows: Array<{ lower_name: string }> = await this.knex('users')
            .whereIn('lower_name', names)
            .where({ visibility: VISIBILITIES.indexOf('public') })
            .select('lower_name');
        return new Set(rows.map((row) => String(row.lower_name)));
    }
}

export const mentions = defineService<MentionService>('git-mentions', (owner) => new MentionService(owner));
