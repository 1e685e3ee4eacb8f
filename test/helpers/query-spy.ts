import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from "kysely";

/** Records every statement the app sends (as its operation tree), to count the reads a request makes. */
export class QuerySpy implements KyselyPlugin {
  readonly statements: string[] = [];

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.statements.push(JSON.stringify(args.node));
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  /** Statements since the last reset that mention `text` (a table name, say). */
  mentioning(text: string): number {
    return this.statements.filter((s) => s.includes(text)).length;
  }

  reset(): void {
    this.statements.length = 0;
  }
}
