from shimgen.plan import Plan


def emit(plan: Plan) -> dict[str, str]:
    return {}
