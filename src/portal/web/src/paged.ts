import { call, q } from "./api.js";
import { useLoad, usePager } from "./ui.js";

type Params = Record<string, string | number | boolean | undefined>;

/**
 * One keyset-paged admin list, 50 a page: its pager, its load, and the page's items (the answer's `key` array).
 * `params` are the list's filters; a change of them loads again.
 */
export function usePagedList<T>(path: string, key: string, params: Params = {}) {
  const pager = usePager();
  const list = useLoad(
    () =>
      call<Record<string, T[] | string> & { next_page_token: string }>(
        "GET",
        `${path}${q({ ...params, page_size: 50, page_token: pager.token })}`,
      ),
    [path, pager.token, JSON.stringify(params)],
  );
  const items = (list.data?.[key] ?? []) as T[];
  return { pager, list, items };
}
