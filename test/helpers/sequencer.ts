import { relative } from "node:path";
import { BaseSequencer, type TestSequencerConstructor, type TestSpecification } from "vitest/node";

/**
 * vitest's order (a project's files longest first by the durations its cache holds, else largest first), with the
 * files of `first` moved ahead of the rest of their project, in the order given. Projects keep their order.
 */
export function filesFirst(first: readonly string[]): TestSequencerConstructor {
  return class FilesFirst extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const sorted = await super.sort(files);
      const projects = new Map<string, number>();
      for (const spec of sorted) if (!projects.has(spec.project.name)) projects.set(spec.project.name, projects.size);
      const rank = (spec: TestSpecification) => {
        const at = first.indexOf(relative(this.ctx.config.root, spec.moduleId));
        return at < 0 ? first.length : at;
      };
      return sorted
        .map((spec, index) => ({ spec, index, project: projects.get(spec.project.name) ?? 0, rank: rank(spec) }))
        .sort((a, b) => a.project - b.project || a.rank - b.rank || a.index - b.index)
        .map(({ spec }) => spec);
    }
  };
}
