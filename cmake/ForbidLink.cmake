# reshard_forbid_link(FORBIDDEN WHY target...): fails the configure step
# when a target links FORBIDDEN, directly or through its link dependencies,
# saying WHY. The project's layers (docs/ARCHITECTURE.md) are enforced with
# it; tests/cmake/forbid_link proves it fires.
function(reshard_collect_links target out)
  set(seen ${${out}})
  get_target_property(libs ${target} LINK_LIBRARIES)
  get_target_property(ilibs ${target} INTERFACE_LINK_LIBRARIES)
  foreach(lib IN LISTS libs ilibs)
    if(TARGET ${lib} AND NOT lib IN_LIST seen)
      list(APPEND seen ${lib})
      reshard_collect_links(${lib} seen)
    endif()
  endforeach()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

function(reshard_forbid_link forbidden why)
  foreach(target ${ARGN})
    if(NOT TARGET ${target})
      continue()
    endif()
    set(links)
    reshard_collect_links(${target} links)
    if(${forbidden} IN_LIST links)
      message(FATAL_ERROR "${target} links ${forbidden}: ${why}")
    endif()
  endforeach()
endfunction()
